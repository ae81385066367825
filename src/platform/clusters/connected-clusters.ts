// Connected clusters on one replica, composed: the tunnels of the agents connected here (tunnel-hub.ts), the
// directory telling other replicas where they are, the heartbeats that write the clusters' status, the reconciler
// of spaces and placed virtual clusters, the apps their agents install with helm (cluster-apps.ts), their metrics Prometheus (cluster-metrics.ts), the index of spaces the proxy reads, and the two passthrough routes (an
// agent's tunnel; kubectl through the platform). Offline detection of clusters whose replica died runs on the
// leader with the instances' (platform.ts).

import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { StoreInformer } from "../../auth/store-informer.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { PassthroughRoute } from "../../http/passthrough.ts";
import type { Registry } from "../../registry/registry.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import { ClusterApps } from "./cluster-apps.ts";
import { ClusterHeartbeats, DEFAULT_CLUSTER_HEARTBEAT_MS } from "./cluster-heartbeats.ts";
import { ClusterMetrics } from "./cluster-metrics.ts";
import { clusterRoutes } from "./cluster-routes.ts";
import { ClusterWorkloads } from "./cluster-workloads.ts";
import { ReplicaRelay, wasRelayed } from "./replica-relay.ts";
import { SpaceIndex } from "./space-index.ts";
import { TunnelDirectory } from "./tunnel-directory.ts";
import { TunnelHub } from "./tunnel-hub.ts";

export interface ConnectedClustersOptions {
  storage: KeyValueStore;
  registry: Registry;
  settings: LiveSettings;
  /** The iss of direct cluster endpoint tokens. */
  issuer(): string;
  /** Why an access key would not authenticate now; undefined when it would (the platform's auth). */
  keyProblem(name: string, uid: string): string | undefined;
  /** This replica's base URL and serving CA, as other replicas and status reports name it (known once listening). */
  self(): { url: string; caPem?: string };
  /** How often a connected agent is asked for its info (default 30 s). */
  heartbeatMs?: number;
  /** How often spaces and placed virtual clusters are looked at again (default 60 s). */
  resyncMs?: number;
  logger?: Logger;
}

export interface ConnectedClusters {
  routes: PassthroughRoute[];
  /** Fastify routes: the clusters' metrics federation. */
  plugins: ((app: FastifyInstance) => void)[];
  close(): Promise<void>;
}

/** Starts the parts in order; a failure half way closes the ones started (the same code as close()). */
export async function startConnectedClusters(options: ConnectedClustersOptions): Promise<ConnectedClusters> {
  const { logger } = options;
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_CLUSTER_HEARTBEAT_MS;
  // Closed in reverse: metrics, apps, workloads, the agents' tunnels, heartbeats, routes, the space index.
  await using started = new AsyncDisposableStack();
  const hub = new TunnelHub();
  const directory = new TunnelDirectory({
    storage: options.storage,
    self: options.self,
    staleAfterMs: 3 * heartbeatMs,
  });
  const spaces = new SpaceIndex();
  const spaceInformer = new StoreInformer(options.storage, spaces, (error) =>
    logger?.error({ err: String(error) }, "space index update failed"),
  );
  started.defer(() => spaceInformer.stop());
  await spaceInformer.start();
  const routes = clusterRoutes({
    registry: options.registry,
    hub,
    directory,
    spaces,
    issuer: options.issuer,
    self: () => options.self().url,
    logger,
  });
  started.defer(() => routes.close());
  const heartbeats = new ClusterHeartbeats({
    registry: options.registry,
    hub,
    directory,
    replica: () => options.self().url,
    keyProblem: options.keyProblem,
    intervalMs: heartbeatMs,
    logger,
  });
  started.defer(() => heartbeats.stop());
  started.defer(() => hub.close());
  heartbeats.start();
  const workloads = new ClusterWorkloads({
    registry: options.registry,
    hub,
    settings: options.settings,
    resyncMs: options.resyncMs,
    logger,
  });
  started.defer(() => workloads.stop());
  await workloads.start();
  const apps = new ClusterApps({
    registry: options.registry,
    hub,
    settings: options.settings,
    resyncMs: options.resyncMs,
    logger,
  });
  started.defer(() => apps.stop());
  await apps.start();
  const federationRelay = new ReplicaRelay();
  started.defer(() => federationRelay.close());
  const metrics = new ClusterMetrics({
    registry: options.registry,
    hub,
    async relayToHolder(cluster, request, response) {
      if (wasRelayed(request)) return false;
      const record = await directory.lookup(cluster);
      if (!record || record.replica === options.self().url) return false;
      await federationRelay.request(record, request, response);
      return true;
    },
    settings: options.settings,
    resyncMs: options.resyncMs,
    logger,
  });
  started.defer(() => metrics.stop());
  await metrics.start();
  const running = started.move();
  return { routes: routes.routes, plugins: [metrics.routes()], close: () => running.disposeAsync() };
}
