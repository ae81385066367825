// The platform config module: the Config kind, the controller that keeps the live settings equal to the stored
// Config, and with `--config FILE` the file source that writes the file into it (config/platform-config.ts).

import type { Logger } from "pino";
import type { LiveSettings } from "../config/settings.ts";
import type { ConfigController } from "./config/config-controller.ts";
import { type RunningPlatformConfig, startPlatformConfig } from "./config/platform-config.ts";
import type { ManagementResourceParts } from "./management-resources.ts";
import type { ModuleContext, PlatformModule } from "./platform-module.ts";

export interface ConfigModuleOptions {
  settings: LiveSettings;
  /** `platform start --config FILE`. */
  configFile?: string;
  /** Where the Config may put the audit log. */
  auditDirs: () => string[];
  logger?: Logger;
}

export class ConfigModule implements PlatformModule {
  readonly name = "config";
  readonly kinds: Pick<ManagementResourceParts, "config">;
  private readonly options: ConfigModuleOptions;
  private running?: RunningPlatformConfig;

  constructor(options: ConfigModuleOptions) {
    this.options = options;
    this.kinds = { config: { auditDirs: options.auditDirs } };
  }

  /** The stored (or file) config is in force when this resolves: before the first request. */
  async start({ registry }: ModuleContext): Promise<void> {
    const { settings, configFile, logger } = this.options;
    this.running = await startPlatformConfig({ registry, settings, configFile, logger });
  }

  get controller(): ConfigController {
    if (!this.running) throw new Error("the config module is not started");
    return this.running.controller;
  }

  async close(): Promise<void> {
    this.running?.close();
    this.running = undefined;
  }
}
