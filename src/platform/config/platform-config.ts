// The platform config subsystem as the composition root starts it: the controller that keeps the live settings
// equal to the stored Config, and, with `--config FILE`, the file source that writes the file into it.

import type { Logger } from "pino";
import { GROUP } from "../../apis/management/v1/common.ts";
import { CONFIG_NAME } from "../../apis/management/v1/config.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { Registry } from "../../registry/registry.ts";
import { ConfigController } from "./config-controller.ts";
import { ConfigFileSource } from "./config-file-source.ts";

export interface PlatformConfigOptions {
  registry: Registry;
  settings: LiveSettings;
  /** `platform start --config FILE`. */
  configFile?: string;
  logger?: Logger;
}

export interface RunningPlatformConfig {
  controller: ConfigController;
  fileSource?: ConfigFileSource;
  close(): void;
}

export async function startPlatformConfig(options: PlatformConfigOptions): Promise<RunningPlatformConfig> {
  const store = options.registry.store(GROUP, "configs");
  if (!store) throw new Error("the configs resource is not registered");
  const controller = await ConfigController.start({
    store,
    name: CONFIG_NAME,
    settings: options.settings,
    logger: options.logger,
  });
  let fileSource: ConfigFileSource | undefined;
  try {
    if (options.configFile) {
      fileSource = await ConfigFileSource.start({
        path: options.configFile,
        store,
        name: CONFIG_NAME,
        logger: options.logger,
      });
    }
  } catch (error) {
    controller.close();
    throw error;
  }
  return {
    controller,
    fileSource,
    close() {
      fileSource?.close();
      controller.close();
    },
  };
}
