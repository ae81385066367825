// The projects module: Project and VirtualClusterInstance (with the kubeconfig subresource and the instances' client
// CAs), the project index that lets members use their projects, the default project, and the leader's project
// controller and instance liveness (projects/).

import type { Logger } from "pino";
import type { ClusterLookup } from "../apis/management/v1/project-placement.ts";
import type { LiveSettings } from "../config/settings.ts";
import type { Registry } from "../registry/registry.ts";
import type { Authorizer } from "../registry/types.ts";
import type { KeyValueStore } from "../storage/types.ts";
import type { ManagementResourceParts } from "./management-resources.ts";
import type { PlatformModule, TaskMaker } from "./platform-module.ts";
import { InstanceLiveness } from "./projects/instance-liveness.ts";
import { createProjectResources, type ProjectResources } from "./projects/project-resources.ts";

export interface ProjectsModuleOptions {
  storage: KeyValueStore;
  settings: LiveSettings;
  /** Filled with every module's kinds before any module starts; read when requests are served. */
  registry: Registry;
  /** Connected clusters, which instances placed on one are checked against. */
  clusters: ClusterLookup;
  /** Given the project index at start (members use their projects). */
  authorizer: Authorizer;
  /** An instance without a heartbeat for this long is marked offline. */
  offlineAfterMs: number;
  logger?: Logger;
}

export class ProjectsModule implements PlatformModule {
  readonly name = "projects";
  readonly kinds: Pick<ManagementResourceParts, "projects">;
  private readonly options: ProjectsModuleOptions;
  private readonly projects: ProjectResources;

  constructor(options: ProjectsModuleOptions) {
    this.options = options;
    const { storage, settings, registry, clusters, logger } = options;
    this.projects = createProjectResources({ storage, settings, registry, clusters, logger });
    this.kinds = { projects: this.projects.definitions };
  }

  async start(): Promise<void> {
    await this.projects.start(this.options.authorizer);
  }

  tasks(): TaskMaker[] {
    const { registry, offlineAfterMs, logger } = this.options;
    return [
      () => this.projects.controller(),
      () => {
        const monitor = new InstanceLiveness({ registry, offlineAfterMs, logger });
        return { name: "instance liveness", start: () => monitor.start(), stop: () => void monitor.stop() };
      },
    ];
  }

  async close(): Promise<void> {
    this.projects.close();
  }
}
