// Writes the platform-owned fields of the Config's status: one condition per system (SecretStoreReady,
// MetricsReady, AppsCatalogReady) and the maintenance window's schedule. Writes are serialized and retried on a
// conflict (compare-and-swap on the resourceVersion), and skipped when nothing would change, so systems reporting
// the same state every sync write nothing.

import type { Logger } from "pino";
import { isStatusError } from "../../apimachinery/errors.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { CONFIG_NAME, type Config, type MaintenanceStatus } from "../../apis/management/v1/config.ts";
import type { Condition } from "../../apis/management/v1/project-schema.ts";
import { trustedConfigContext } from "../../config/trusted-context.ts";
import type { Registry } from "../../registry/registry.ts";

const AGENT = "platform-config-status";
const ATTEMPTS = 5;

export interface ConditionReport {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  /** Never a secret value: messages name what failed and why. */
  message: string;
}

export class ConfigStatusWriter {
  private readonly registry: Registry;
  private readonly logger?: Logger;
  private queue: Promise<void> = Promise.resolve();

  constructor(registry: Registry, logger?: Logger) {
    this.registry = registry;
    this.logger = logger;
  }

  /** Sets one condition (lastTransitionTime moves only when its status changes); undefined removes it. */
  setCondition(type: string, report: ConditionReport | undefined): Promise<void> {
    return this.change((status) => {
      const conditions = [...(status.conditions ?? [])];
      const index = conditions.findIndex((c) => c.type === type);
      const old = index === -1 ? undefined : conditions[index];
      if (!report) {
        if (index === -1) return false;
        conditions.splice(index, 1);
      } else {
        const next: Condition = {
          ...report,
          lastTransitionTime:
            old?.status === report.status && old.lastTransitionTime ? old.lastTransitionTime : new Date().toISOString(),
        };
        if (old && JSON.stringify(old) === JSON.stringify(next)) return false;
        if (index === -1) conditions.push(next);
        else conditions[index] = next;
      }
      if (conditions.length > 0) status.conditions = conditions;
      else delete status.conditions;
      return true;
    });
  }

  /** Replaces status.maintenance; without a lastRun of its own, the stored one stays. */
  setMaintenance(maintenance: MaintenanceStatus | undefined): Promise<void> {
    return this.change((status) => {
      const lastRun = maintenance?.lastRun ?? status.maintenance?.lastRun;
      const next = maintenance && { ...maintenance, ...(lastRun ? { lastRun } : {}) };
      if (JSON.stringify(status.maintenance) === JSON.stringify(next)) return false;
      if (next) status.maintenance = next;
      else delete status.maintenance;
      return true;
    });
  }

  /** Waits for the writes queued so far. */
  settled(): Promise<void> {
    return this.queue;
  }

  private change(edit: (status: NonNullable<Config["status"]>) => boolean): Promise<void> {
    const run = this.queue.then(() => this.write(edit));
    this.queue = run.catch((error) => {
      this.logger?.warn({ err: String(error) }, "writing the Config's status failed");
    });
    return this.queue;
  }

  private async write(edit: (status: NonNullable<Config["status"]>) => boolean): Promise<void> {
    const store = this.registry.store(GROUP, "configs");
    if (!store) return;
    for (let attempt = 1; ; attempt++) {
      const config = (await store.get(trustedConfigContext(AGENT), { name: CONFIG_NAME })) as Config;
      const status = structuredClone(config.status ?? {});
      if (!edit(status)) return;
      try {
        await store.update(
          trustedConfigContext(AGENT),
          { name: CONFIG_NAME },
          { ...config, status },
          { fieldManager: AGENT },
        );
        return;
      } catch (error) {
        if (!isStatusError(error) || error.code !== 409 || attempt >= ATTEMPTS) throw error;
      }
    }
  }
}
