#!/usr/bin/env node
// Installed entry point. In a checkout the TypeScript sources run directly (Node 24 strips types). Node refuses to
// strip types under node_modules, so an installed copy runs the JavaScript that `npm run build` emitted to dist/
// (the `prepare` script builds it on `npm install` in a checkout and before `npm pack`).
import { existsSync } from "node:fs";
import { enableCompileCache } from "node:module";
import { fileURLToPath } from "node:url";

// V8's compiled code, and for the TypeScript sources their type-stripped text, are cached between runs (in the
// system's temporary directory, or NODE_COMPILE_CACHE): commands start faster, and a long-running process from a
// checkout does not keep Node's type stripper (about 20 MB) once the cache holds every module.
enableCompileCache?.();

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
