#!/usr/bin/env node
// Installed entry point. In a checkout the TypeScript sources run directly (Node 24 strips types). Node refuses to
// strip types under node_modules, so an installed copy runs the JavaScript that `npm run build` emitted to dist/
// (the `prepare` script builds it on `npm install` in a checkout and before `npm pack`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const source = new URL("../src/cli/main.ts", import.meta.url);
const built = new URL("../dist/cli/main.js", import.meta.url);
const installed = fileURLToPath(import.meta.url)
  .split(/[\\/]/)
  .includes("node_modules");

if (!installed && existsSync(source)) {
  await import(source.href);
} else if (existsSync(built)) {
  await import(built.href);
} else {
  process.stderr.write("error: this copy of virtualcluster is not built: run `npm run build` in the package\n");
  process.exit(1);
}
