// Builds the web console into dist/console (npm run build, which npm install runs through "prepare"). The build goes
// to dist/console.next first and replaces dist/console in two renames at the end, so a platform starting meanwhile
// (the test suite packs the package, which builds) never reads a half-written console. Every text file gets its gzip
// beside it, so the platform serves it gzipped without compressing it at each start.
import { existsSync, renameSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";
import { precompressConsole } from "../src/platform/console/console-files.ts";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));
const target = `${dist}console`;
const staging = `${dist}console.next`;

function swapIntoPlace(): Plugin {
  return {
    name: "swap-into-place",
    apply: "build",
    closeBundle() {
      const old = `${dist}console.old`;
      rmSync(old, { recursive: true, force: true });
      if (existsSync(target)) renameSync(target, old);
      renameSync(staging, target);
      rmSync(old, { recursive: true, force: true });
    },
  };
}

function precompress(): Plugin {
  return {
    name: "precompress",
    apply: "build",
    async writeBundle(options) {
      if (options.dir) await precompressConsole(options.dir);
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  plugins: [react(), precompress(), swapIntoPlace()],
  build: {
    outDir: staging,
    emptyOutDir: true,
    assetsDir: "assets",
    sourcemap: false,
    // The pages load on demand; the first load is the shell and the page asked for.
    chunkSizeWarningLimit: 1500,
  },
});
