// The web console as `npm run build` makes it (console/vite.config.ts), built into the image's staging directory
// instead of dist/: the checkout's dist/ stays as it is, whatever else is running from it.
import { defineConfig, type Plugin, type PluginOption } from "vite";
import consoleConfig from "../console/vite.config.ts";

const outDir = process.env.VIRTUALCLUSTER_CONSOLE_OUT_DIR;
if (!outDir) throw new Error("VIRTUALCLUSTER_CONSOLE_OUT_DIR must name the directory to build the console into");

const plugins = (consoleConfig.plugins ?? []).flat(3) as PluginOption[];

export default defineConfig({
  ...consoleConfig,
  // Without the plugin that swaps dist/console.next into dist/console.
  plugins: plugins.filter((plugin) => (plugin as Plugin | undefined)?.name !== "swap-into-place"),
  build: { ...consoleConfig.build, outDir, emptyOutDir: true },
});
