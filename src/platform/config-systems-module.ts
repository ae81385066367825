// The Config's systems as a platform module (src/platform/config-systems/): cost control, the secret store, the apps
// catalog and the cloud maintenance window. Made with the other modules, so store housekeeping can ask the window
// from the start; started after the API server, so Prometheus knows where to scrape the platform; its leader tasks
// (maintenance, secret store sync, cost control) run with every module's.

import type { Logger } from "pino";
import type { LiveSettings } from "../config/settings.ts";
import type { Registry as MetricsRegistry } from "../http/prometheus.ts";
import type { Registry } from "../registry/registry.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { ADMIN_USER } from "./bootstrap.ts";
import { ConfigSystems, type ConfigSystemsOptions } from "./config-systems/config-systems.ts";
import { registerPlatformUsage } from "./config-systems/usage-samples.ts";
import type { ModuleRoutes, PlatformModule, TaskMaker } from "./platform-module.ts";

export interface ConfigSystemsModuleOptions {
  settings: LiveSettings;
  dataDir: string;
  storage: KeyValueStore;
  registry: Registry;
  metrics: MetricsRegistry;
  rotateSigningKey(): Promise<{ keyID: string }>;
  rotateEncryptionKey(): Promise<{ keyID: string; reencrypted: number }>;
  /** Where the API server listens, once it does. */
  server(): { url: string; caPem?: string };
  options?: ConfigSystemsOptions;
  logger?: Logger;
}

export class ConfigSystemsModule implements PlatformModule {
  readonly name = "config-systems";
  readonly systems: ConfigSystems;
  private readonly options: ConfigSystemsModuleOptions;

  constructor(options: ConfigSystemsModuleOptions) {
    this.options = options;
    this.systems = new ConfigSystems({ ...options, adminUser: ADMIN_USER });
  }

  /** Whether disruptive work may start now (store housekeeping's defragmentation asks). */
  maintenanceOpen(): boolean {
    return this.systems.maintenance.isOpen();
  }

  async start(): Promise<void> {
    const { metrics, registry, storage, settings } = this.options;
    registerPlatformUsage({ metrics, registry, storage, settings });
    this.systems.listening(this.options.server());
    // Cost control may have started Prometheus before the server listened: it learns the address now.
    this.systems.cost.targetsChanged();
    this.systems.start();
  }

  routes(): ModuleRoutes {
    return { plugins: this.systems.plugins() };
  }

  tasks(): TaskMaker[] {
    return this.systems.leaderTasks();
  }

  async close(): Promise<void> {
    await this.systems.close();
  }
}
