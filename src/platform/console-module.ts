// The console module: the web console's pages for browser navigations, its bundle and branding (console/), when it
// is built (dist/console).

import { platformVersion } from "../apimachinery/version.ts";
import type { LiveSettings } from "../config/settings.ts";
import { type ConsoleFiles, defaultConsoleDir, loadConsoleFiles } from "./console/console-files.ts";
import { CONSOLE_PUBLIC_PATHS, consoleRoutes } from "./console/console-routes.ts";
import type { ModuleRoutes, PlatformModule } from "./platform-module.ts";

export class ConsoleModule implements PlatformModule {
  readonly name = "console";
  private readonly settings: LiveSettings;
  private files?: ConsoleFiles;

  constructor(settings: LiveSettings) {
    this.settings = settings;
  }

  async start(): Promise<void> {
    this.files = await loadConsoleFiles(defaultConsoleDir());
  }

  /** Whether the console is built (served at /). */
  get built(): boolean {
    return this.files?.index !== undefined;
  }

  routes(): ModuleRoutes {
    const { files, settings } = this;
    if (!files) return {};
    return {
      publicPaths: CONSOLE_PUBLIC_PATHS,
      plugins: [consoleRoutes({ settings, files, version: platformVersion().gitVersion })],
    };
  }

  async close(): Promise<void> {}
}
