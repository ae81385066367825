// Marks a virtual cluster instance (or a connected cluster) offline when its heartbeats stop, and online again when
// they resume.
// A runtime reports every heartbeat interval (30 s by default) through the status subresource; an instance whose
// online status is true but whose last heartbeat is older than `offlineAfterMs` (default 3 heartbeats, 90 s) gets
// online: false, phase Failed, reason HeartbeatTimeout and condition Online=False. The runtime's next heartbeat sets
// online: true and phase Ready again; this monitor then sets the condition Online=True (reason HeartbeatReceived).

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import type { Condition } from "../../apis/management/v1/project-schema.ts";
import type { VirtualClusterInstance } from "../../apis/management/v1/virtualclusterinstance.ts";
import type { Registry } from "../../registry/registry.ts";
import { systemContext } from "../../registry/system-context.ts";
import { formatTimestamp } from "../../registry/time.ts";

export const DEFAULT_OFFLINE_AFTER_MS = 90_000;
export const ONLINE_CONDITION = "Online";
export const HEARTBEAT_TIMEOUT = "HeartbeatTimeout";
const MANAGER = "virtualcluster-platform-liveness";

export interface InstanceLivenessOptions {
  registry: Registry;
  /** The kind watched (default virtualclusterinstances; connected clusters use clusters) and its offline phase. */
  resource?: { plural: string; offlinePhase: string };
  /** No heartbeat for this long: offline. */
  offlineAfterMs?: number;
  /** How often instances are checked (default: a third of offlineAfterMs, at most 10 s). */
  checkIntervalMs?: number;
  now?: () => number;
  logger?: Logger;
}

const context = () => systemContext("system:instance-liveness", MANAGER);

export class InstanceLiveness {
  readonly #options: InstanceLivenessOptions;
  readonly #offlineAfterMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(options: InstanceLivenessOptions) {
    this.#options = options;
    this.#offlineAfterMs = options.offlineAfterMs ?? DEFAULT_OFFLINE_AFTER_MS;
  }

  start(): void {
    const interval = this.#options.checkIntervalMs ?? Math.min(10_000, Math.max(250, this.#offlineAfterMs / 3));
    this.#timer = setInterval(() => {
      this.#running ??= this.check()
        .catch((error) => this.#options.logger?.warn({ err: String(error) }, "instance liveness check failed"))
        .finally(() => {
          this.#running = undefined;
        });
    }, interval);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }

  /** One pass over every instance. */
  async check(): Promise<void> {
    const resource = this.#options.resource ?? { plural: "virtualclusterinstances", offlinePhase: "Failed" };
    const store = this.#options.registry.genericStore(GROUP, resource.plural);
    if (!store) return;
    const now = this.#options.now?.() ?? Date.now();
    const list = await store.list(context(), {});
    for (const item of list.items as VirtualClusterInstance[]) {
      const status = item.status ?? {};
      const condition = status.conditions?.find((c) => c.type === ONLINE_CONDITION);
      const heartbeat = status.lastHeartbeatTime ? Date.parse(status.lastHeartbeatTime) : Number.NaN;
      if (status.online !== true || Number.isNaN(heartbeat)) continue;
      let patch: Record<string, unknown> | undefined;
      if (now - heartbeat > this.#offlineAfterMs) {
        const message = `no heartbeat since ${status.lastHeartbeatTime} (offline after ${Math.round(this.#offlineAfterMs / 1000)} s without one)`;
        patch = {
          online: false,
          phase: resource.offlinePhase,
          reason: HEARTBEAT_TIMEOUT,
          message,
          conditions: withCondition(status.conditions, "False", HEARTBEAT_TIMEOUT, message, now),
        };
        this.#options.logger?.info({ instance: `${item.metadata.namespace}/${item.metadata.name}` }, message);
      } else if (condition?.status !== "True") {
        patch = {
          conditions: withCondition(status.conditions, "True", "HeartbeatReceived", "heartbeats arrive", now),
        };
      }
      if (!patch) continue;
      await store
        .patch(
          context(),
          { namespace: item.metadata.namespace, name: item.metadata.name ?? "", subresource: "status" },
          "merge",
          { metadata: { uid: item.metadata.uid, resourceVersion: item.metadata.resourceVersion }, status: patch },
          { fieldManager: MANAGER },
        )
        .catch((error) => {
          // Changed meanwhile (a heartbeat) or gone: the next pass looks again.
          if (!isStatusError(error) || (error.reason !== "Conflict" && error.reason !== "NotFound")) throw error;
        });
    }
  }
}

function withCondition(
  conditions: Condition[] | undefined,
  status: Condition["status"],
  reason: string,
  message: string,
  now: number,
): Condition[] {
  const old = conditions?.find((c) => c.type === ONLINE_CONDITION);
  const condition: Condition = {
    type: ONLINE_CONDITION,
    status,
    reason,
    message,
    lastTransitionTime: old?.status === status ? old.lastTransitionTime : formatTimestamp(new Date(now)),
  };
  return [...(conditions ?? []).filter((c) => c.type !== ONLINE_CONDITION), condition];
}
