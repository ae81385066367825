import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { KubeHttp } from "../kube/kube-http.ts";
import { SYNCER_COMPONENT } from "./constants.ts";
import { describeError, statusCode } from "./kube-client.ts";
import type { StatsCounter } from "./stats.ts";
import type { WireObject } from "./types.ts";

/** Longest message kept (events are for people; the full error is in the log). */
const MAX_MESSAGE = 1024;
/** Events remembered for count bumps; the oldest are forgotten first. */
const MAX_REMEMBERED = 4096;

/** metav1.Time: RFC 3339 in seconds. */
const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");

/** A name unique enough for an event: `<object>.<hex>`, as the Kubernetes event recorder names them. */
function eventName(objectName: string): string {
  const suffix = `${Date.now().toString(16)}${randomBytes(4).toString("hex")}`;
  return `${objectName.slice(0, 253 - suffix.length - 1)}.${suffix}`;
}

/**
 * Records Warning events on virtual objects. A repeat of the same reason and message on the same object bumps
 * `count` and `lastTimestamp` of the event already recorded instead of creating another.
 */
export class EventRecorder {
  readonly #http: KubeHttp;
  readonly #stats: StatsCounter;
  readonly #logger: Logger | undefined;
  readonly #recorded = new Map<string, { namespace: string; name: string; count: number }>();

  constructor(http: KubeHttp, stats: StatsCounter, logger?: Logger) {
    this.#http = http;
    this.#stats = stats;
    this.#logger = logger;
  }

  /** Records the event; failures to record are logged, never thrown (the sync error itself is what matters). */
  async warning(
    object: WireObject,
    kind: { kind: string; apiVersion: string },
    reason: string,
    text: string,
  ): Promise<void> {
    const metadata = object.metadata ?? {};
    const namespace = metadata.namespace ?? "default";
    const message = text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 3)}...` : text;
    const key = [kind.kind, namespace, metadata.name, metadata.uid, reason, message].join("\n");
    try {
      const known = this.#recorded.get(key);
      if (known && (await this.#bump(known))) return;
      const name = eventName(metadata.name ?? "object");
      const time = now();
      await this.#http.request({
        method: "POST",
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
        body: {
          apiVersion: "v1",
          kind: "Event",
          metadata: { name, namespace },
          involvedObject: {
            apiVersion: kind.apiVersion,
            kind: kind.kind,
            name: metadata.name,
            namespace,
            uid: metadata.uid,
            resourceVersion: metadata.resourceVersion,
          },
          reason,
          message,
          type: "Warning",
          count: 1,
          firstTimestamp: time,
          lastTimestamp: time,
          source: { component: SYNCER_COMPONENT },
          reportingComponent: SYNCER_COMPONENT,
          reportingInstance: SYNCER_COMPONENT,
        },
      });
      this.#remember(key, { namespace, name, count: 1 });
      this.#stats.write("virtual", "Event", "create");
      this.#stats.syncErrorEvents++;
    } catch (error) {
      this.#logger?.warn({ kind, namespace, name: metadata.name, error: describeError(error) }, "cannot record event");
    }
  }

  /** Bumps a recorded event; false when it is gone (deleted or expired), so a new one is created. */
  async #bump(known: { namespace: string; name: string; count: number }): Promise<boolean> {
    try {
      await this.#http.request({
        method: "PATCH",
        path: `/api/v1/namespaces/${encodeURIComponent(known.namespace)}/events/${encodeURIComponent(known.name)}`,
        contentType: "application/json-patch+json",
        body: [
          { op: "replace", path: "/count", value: known.count + 1 },
          { op: "replace", path: "/lastTimestamp", value: now() },
        ],
      });
    } catch (error) {
      if (statusCode(error) === 404 || statusCode(error) === 422) return false;
      throw error;
    }
    known.count++;
    this.#stats.write("virtual", "Event", "patch");
    this.#stats.syncErrorEvents++;
    return true;
  }

  #remember(key: string, entry: { namespace: string; name: string; count: number }): void {
    this.#recorded.set(key, entry);
    if (this.#recorded.size > MAX_REMEMBERED) this.#recorded.delete(this.#recorded.keys().next().value!);
  }
}
