// The connected clusters module: Cluster (with its agent-key subresource) and SpaceInstance, the agents' tunnels to
// this replica, kubectl through the platform, spaces and placed virtual clusters (clusters/), and the leader's
// offline detection of clusters whose replica died. The tunnels end first when the API server stops (drain).

import type { Logger } from "pino";
import type { ClusterLookup } from "../apis/management/v1/project-placement.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { Registry } from "../registry/registry.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { createClusterResources } from "./clusters/cluster-resources.ts";
import { type ConnectedClusters, startConnectedClusters } from "./clusters/connected-clusters.ts";
import type { ManagementResourceParts } from "./management-resources.ts";
import type { ModuleRoutes, PlatformModule, TaskMaker } from "./platform-module.ts";
import { InstanceLiveness } from "./projects/instance-liveness.ts";

export interface ClustersModuleOptions {
  storage: KeyValueStore;
  settings: LiveSettings;
  /** Filled with every module's kinds before any module starts; read when requests are served. */
  registry: Registry;
  /** The iss of direct cluster endpoint tokens. */
  issuer(): string;
  /** Why an access key would not authenticate now (the identity module). */
  keyProblem(name: string, uid: string): string | undefined;
  /** This replica's base URL and serving CA (known once the API server listens). */
  self(): { url: string; caPem?: string };
  heartbeatMs: number;
  logger?: Logger;
}

export class ClustersModule implements PlatformModule {
  readonly name = "clusters";
  readonly kinds: Pick<ManagementResourceParts, "clusters">;
  /** Existence of clusters, for the placements of virtual cluster instances. */
  readonly clusterLookup: ClusterLookup;
  private readonly options: ClustersModuleOptions;
  private connected?: ConnectedClusters;
  private closing?: Promise<void>;

  constructor(options: ClustersModuleOptions) {
    this.options = options;
    const resources = createClusterResources(options.settings, options.registry);
    this.clusterLookup = resources.clusterLookup;
    this.kinds = { clusters: resources.definitions };
  }

  async start(): Promise<void> {
    const { storage, registry, settings, heartbeatMs, logger } = this.options;
    this.connected = await startConnectedClusters({
      storage,
      registry,
      settings,
      issuer: () => this.options.issuer(),
      keyProblem: (name, uid) => this.options.keyProblem(name, uid),
      self: () => this.options.self(),
      heartbeatMs,
      logger,
    });
  }

  routes(): ModuleRoutes {
    return { passthrough: this.connected?.routes ?? [], plugins: this.connected?.plugins ?? [] };
  }

  tasks(): TaskMaker[] {
    const { registry, heartbeatMs, logger } = this.options;
    return [
      () => {
        const resource = { plural: "clusters", offlinePhase: "Offline" };
        const liveness = new InstanceLiveness({ registry, resource, offlineAfterMs: 3 * heartbeatMs, logger });
        return { name: "cluster liveness", start: () => liveness.start(), stop: () => void liveness.stop() };
      },
    ];
  }

  /** The agents' tunnels (and what is proxied over them) end before the server waits for its connections. */
  drain(): Promise<void> {
    return this.close();
  }

  close(): Promise<void> {
    this.closing ??= this.connected?.close() ?? Promise.resolve();
    return this.closing;
  }
}
