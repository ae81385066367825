// Cost control per connected cluster, on the replica holding each cluster's tunnel: while the Config's costControl
// is enabled, the cluster's agent runs a metrics Prometheus with the effective settings — each of the Cluster's
// spec.costControl.metrics fields (replicas, retention, storage, resources, scrapeInterval) over the Config's
// cluster.metrics defaults (the spec's rule) — and stops it when cost control is turned off, replicas is 0 or the
// Cluster is deleted. The Cluster's
// MetricsReady condition says where it runs, or why not. GET /platform/clusters/<name>/federate hands the platform's
// Prometheus the agent's federation answer through the tunnel, authorized like /metrics: the platform asks the agent
// for the usage series alone, whatever the caller's match[], and passes on only the samples this cluster may report
// (federation-filter.ts: its own usage and that of the virtual clusters placed on it, as PlacedInstances knows them);
// an answer that is not exposition text is refused whole (503), so the scrape fails instead of storing part of it.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { errors, isStatusError } from "../../apimachinery/errors.ts";
import type { Cluster } from "../../apis/management/v1/cluster-schema.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { StoreInformer } from "../../auth/store-informer.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { MetricsSettings } from "../../config/system-settings.ts";
import { normaliseClusterMetricsState, normaliseFederationAnswer } from "../../http/tunnel/agent-answers.ts";
import { type ClusterMetricsState, callAgent } from "../../http/tunnel/agent-api.ts";
import { ExpositionError } from "../../metrics/parse-exposition.ts";
import { parseKey } from "../../registry/keys.ts";
import type { Registry } from "../../registry/registry.ts";
import { RetryingQueue } from "../../registry/retrying-queue.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import { formatTimestamp } from "../../registry/time.ts";
import type { StoredRecord, WatchEvent } from "../../storage/types.ts";
import { type FilteredFederation, filterFederation } from "./federation-filter.ts";
import { INSTANCES_PREFIX, PlacedInstances } from "./placed-instances.ts";
import type { ConnectedAgent, TunnelHub } from "./tunnel-hub.ts";

const MANAGER = "virtualcluster-platform-cluster-metrics";
const CLUSTERS = `/${GROUP}/clusters/`;
const CONDITION = "MetricsReady";
const REPLICAS_ZERO =
  "metrics.replicas is 0: no Prometheus runs for this cluster; the platform counts it from its agent's heartbeats";
const AGENT_TIMEOUT_MS = 90_000;
const FEDERATE_TIMEOUT_MS = 30_000;
const RETRY_MS = 15_000;
const DEFAULT_RESYNC_MS = 60_000;
/** A cluster dropping the same number of samples is logged again after this long. */
const DROPPED_LOG_MS = 10 * 60_000;
/** The platform's Prometheus federates these from each cluster's. */
export const FEDERATED_SERIES = '{__name__=~"vcp_usage_.+"}';
/** What the platform asks an agent's Prometheus for, whatever its own caller asked. */
const FEDERATE_QUERY = new URLSearchParams([["match[]", FEDERATED_SERIES]]).toString();
export const federatePath = (cluster: string) => `/platform/clusters/${cluster}/federate`;

/** The Cluster's own settings over the Config's defaults, field by field (each resource quantity on its own). */
export function effectiveClusterMetrics(defaults: MetricsSettings, cluster: Cluster | undefined): MetricsSettings {
  const own = cluster?.spec?.costControl?.metrics;
  const limits = own?.resources?.limits;
  const requests = own?.resources?.requests;
  const quantity = (value: number | string | undefined, fallback: string) =>
    value === undefined || value === "" ? fallback : String(value);
  const storageClass = own?.storage?.storageClass ?? defaults.storageClass;
  return {
    replicas: own?.replicas ?? defaults.replicas,
    retention: own?.retention || defaults.retention,
    storageSize: own?.storage?.size || defaults.storageSize,
    scrapeInterval: own?.scrapeInterval || defaults.scrapeInterval,
    memoryLimit: quantity(limits?.memory, defaults.memoryLimit),
    cpuLimit: quantity(limits?.cpu, defaults.cpuLimit),
    memoryRequest: quantity(requests?.memory, defaults.memoryRequest),
    cpuRequest: quantity(requests?.cpu, defaults.cpuRequest),
    ...(storageClass === undefined ? {} : { storageClass }),
  };
}

/** Whether a cluster's metrics Prometheus runs (its usage then comes from there, not from heartbeats). */
export function clusterMetricsRunning(cluster: Cluster): boolean {
  return cluster.status?.conditions?.some((c) => c.type === CONDITION && c.status === "True") === true;
}

export interface ClusterMetricsOptions {
  registry: Registry;
  hub: TunnelHub;
  /**
   * Relays a federation request for a cluster whose agent is connected to another replica to that replica; false
   * when no other replica holds it (or the request was relayed here already). Without it: 503 there.
   */
  relayToHolder?(cluster: string, request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  settings: LiveSettings;
  resyncMs?: number;
  logger?: Logger;
}

const context = () => systemContext("system:cluster-metrics", MANAGER);

export class ClusterMetrics {
  readonly #options: ClusterMetricsOptions;
  readonly #informer: StoreInformer;
  readonly #queue: RetryingQueue;
  readonly #placed = new PlacedInstances();
  /** Per cluster: the dropped count last logged, and when. */
  readonly #droppedLogged = new Map<string, { dropped: number; at: number }>();
  #resync?: NodeJS.Timeout;
  #unlisten?: () => void;
  #unsubscribe?: () => void;
  #stopped = false;
  readonly prefixes = [CLUSTERS, INSTANCES_PREFIX];

  constructor(options: ClusterMetricsOptions) {
    this.#options = options;
    this.#informer = new StoreInformer(options.registry.storage, this, (error) =>
      options.logger?.warn({ err: String(error) }, "cluster metrics informer failed"),
    );
    this.#queue = new RetryingQueue({
      firstRetryMs: RETRY_MS,
      maxRetryMs: RETRY_MS,
      failed: (cluster, error) => options.logger?.warn({ cluster, err: String(error) }, "cluster metrics task failed"),
    });
  }

  async start(): Promise<void> {
    await this.#informer.start();
    this.#unlisten = this.#options.hub.listen({ connected: (agent) => this.#schedule(agent.cluster) });
    this.#unsubscribe = this.#options.settings.onChange((next, previous) => {
      if (JSON.stringify(next.costControl) !== JSON.stringify(previous.costControl)) this.#everything();
    });
    this.#resync = setInterval(() => this.#everything(), this.#options.resyncMs ?? DEFAULT_RESYNC_MS);
    this.#resync.unref();
  }

  stop(): void {
    this.#stopped = true;
    this.#unlisten?.();
    this.#unsubscribe?.();
    clearInterval(this.#resync);
    this.#queue.stop();
    this.#informer.stop();
  }

  reset(records: StoredRecord[]): void {
    this.#placed.reset(records.filter((record) => record.key.startsWith(INSTANCES_PREFIX)));
    this.#everything();
  }

  apply(event: WatchEvent): void {
    if (event.record.key.startsWith(INSTANCES_PREFIX)) {
      this.#placed.apply(event);
      return;
    }
    // A cluster-scoped key has an empty namespace segment: /<group>/clusters//<name>.
    const name = parseKey(event.record.key)?.name ?? "";
    if (event.type === "delete") this.#droppedLogged.delete(name);
    // A status write (heartbeats, our own condition) changes nothing here; a new spec or a deletion does.
    if (event.type === "delete" || specChanged(event.record, event.previous)) this.#schedule(name);
  }

  #everything(): void {
    for (const agent of this.#options.hub.all()) this.#schedule(agent.cluster);
  }

  #schedule(cluster: string): void {
    if (this.#stopped) return;
    this.#queue.run(
      cluster,
      () => this.#reconcile(cluster),
      () => this.#schedule(cluster),
    );
  }

  async #reconcile(name: string): Promise<void> {
    const agent = this.#options.hub.get(name);
    if (!agent) return; // another replica holds the tunnel, or none does
    const cost = this.#options.settings.current().costControl;
    const cluster = await this.#cluster(name);
    if (!cluster || !cost.enabled) {
      await this.#call(agent, "DELETE");
      if (cluster) await this.#condition(cluster, undefined);
      return;
    }
    const { replicas, ...settings } = effectiveClusterMetrics(cost.cluster, cluster);
    if (replicas === 0) {
      await this.#call(agent, "DELETE");
      await this.#condition(cluster, { phase: "Off", message: REPLICAS_ZERO });
      return;
    }
    const state = await this.#call(agent, "PUT", settings);
    await this.#condition(cluster, state);
  }

  async #call(agent: ConnectedAgent, method: "PUT" | "DELETE", body?: unknown): Promise<ClusterMetricsState> {
    const answer = await callAgent<unknown>(agent.session, method, "/metrics", body, AGENT_TIMEOUT_MS);
    if (answer.status !== 200) throw new Error(`the agent answered ${method} /metrics with ${answer.status}`);
    return normaliseClusterMetricsState(answer.body);
  }

  /** MetricsReady as the agent answered (undefined: cost control is off, the condition goes). */
  async #condition(cluster: Cluster, state: ClusterMetricsState | undefined): Promise<void> {
    const conditions = cluster.status?.conditions ?? [];
    const current = conditions.find((c) => c.type === CONDITION);
    const wanted = state && {
      type: CONDITION,
      status: state.phase === "Running" ? ("True" as const) : ("False" as const),
      reason: { Running: "Running", Off: "ReplicasZero", Failed: "PrometheusFailed" }[state.phase],
      message: state.message ?? "",
    };
    if (!wanted && !current) return;
    if (
      wanted &&
      current?.status === wanted.status &&
      current.reason === wanted.reason &&
      current.message === wanted.message
    ) {
      return;
    }
    const others = conditions.filter((c) => c.type !== CONDITION);
    const next = wanted
      ? [
          ...others,
          {
            ...wanted,
            lastTransitionTime:
              current?.status === wanted.status && current.lastTransitionTime
                ? current.lastTransitionTime
                : formatTimestamp(new Date()),
          },
        ]
      : others;
    await this.#store()
      .patch(
        context(),
        { name: cluster.metadata.name ?? "", subresource: "status" },
        "merge",
        { metadata: { uid: cluster.metadata.uid }, status: { conditions: next } },
        { fieldManager: MANAGER },
      )
      .catch((error: unknown) => {
        if (!(isStatusError(error) && error.reason === "NotFound")) throw error;
      });
  }

  async #cluster(name: string): Promise<Cluster | undefined> {
    try {
      return (await this.#store().get(context(), { name })) as Cluster;
    } catch (error) {
      if (isStatusError(error) && error.reason === "NotFound") return undefined;
      throw error;
    }
  }

  #store(): GenericStore {
    const store = this.#options.registry.genericStore(GROUP, "clusters");
    if (!store) throw new Error("clusters are not registered");
    return store;
  }

  /** Relays to the replica holding the cluster's tunnel, or answers 503 (also when that replica cannot be reached). */
  async #relayOrRefuse(name: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    let refusal = errors.serviceUnavailable(`the agent of cluster "${name}" is not connected to the platform`);
    try {
      if (await this.#options.relayToHolder?.(name, request, response)) return;
    } catch (error) {
      if (response.headersSent) return void response.destroy();
      if (isStatusError(error)) refusal = error;
    }
    response.writeHead(refusal.code, { "content-type": "application/json" }).end(JSON.stringify(refusal.status));
  }

  /**
   * GET /platform/clusters/<name>/federate: the agent's Prometheus's federation answer, through the tunnel here or
   * relayed to the replica holding it.
   */
  routes(): (app: FastifyInstance) => void {
    return (app) => {
      app.get("/platform/clusters/:name/federate", async (request, reply) => {
        const { name } = request.params as { name: string };
        const agent = this.#options.hub.get(name);
        if (!agent) {
          // The replica holding the tunnel answers (the leader's Prometheus scrapes the leader, wherever the agent is).
          reply.hijack();
          await this.#relayOrRefuse(name, request.raw, reply.raw);
          return;
        }
        const answer = await callAgent<unknown>(
          agent.session,
          "GET",
          `/metrics/federate?${FEDERATE_QUERY}`,
          undefined,
          FEDERATE_TIMEOUT_MS,
        ).catch((error: unknown) => {
          throw errors.serviceUnavailable(`the agent of cluster "${name}" did not answer: ${(error as Error).message}`);
        });
        const { text, message } = normaliseFederationAnswer(answer.body);
        if (answer.status !== 200 || text === undefined) {
          throw errors.serviceUnavailable(`cluster "${name}": ${message || `agent answered ${answer.status}`}`);
        }
        const filtered = this.#filter(name, text);
        return reply
          .code(200)
          .header("content-type", "text/plain; version=0.0.4; charset=utf-8")
          .header("cache-control", "no-store")
          .send(filtered.text);
      });
    };
  }

  /** The samples of the agent's answer its cluster may report; a malformed answer is a 503 (the scrape fails). */
  #filter(cluster: string, answer: string): FilteredFederation {
    let filtered: FilteredFederation;
    try {
      const virtualClusters = this.#placed.on(cluster, this.#options.settings.current().projectNamespacePrefix);
      filtered = filterFederation(answer, { cluster, virtualClusters });
    } catch (error) {
      if (!(error instanceof ExpositionError)) throw error;
      this.#options.logger?.warn({ cluster, reason: error.message }, "cluster federation answer refused");
      throw errors.serviceUnavailable(
        `cluster "${cluster}": its agent's federation answer was refused: ${error.message}`,
      );
    }
    this.#logDropped(cluster, filtered);
    return filtered;
  }

  /** A warning per cluster when it drops samples: again when the count changes, or after DROPPED_LOG_MS. */
  #logDropped(cluster: string, { kept, dropped }: FilteredFederation): void {
    const last = this.#droppedLogged.get(cluster);
    const now = Date.now();
    if (dropped === 0) {
      this.#droppedLogged.delete(cluster);
      return;
    }
    if (last?.dropped === dropped && now - last.at < DROPPED_LOG_MS) return;
    this.#droppedLogged.set(cluster, { dropped, at: now });
    this.#options.logger?.warn(
      { cluster, kept, dropped },
      "cluster federation: dropped samples the cluster may not report (another cluster, a virtual cluster not placed on it, other labels or names, a value not a count, a repeat)",
    );
  }
}

/** Whether a Cluster's spec changed between two stored versions (or it is new). */
function specChanged(record: StoredRecord, previous: StoredRecord | undefined): boolean {
  if (!previous) return true;
  const spec = (value: string) => JSON.stringify((JSON.parse(value) as Cluster).spec ?? {});
  return spec(record.value) !== spec(previous.value);
}
