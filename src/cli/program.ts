// The `virtualcluster` program's own entry script, which commands run again in the background to run a virtual
// cluster: src/cli/main.ts in a checkout, dist/cli/main.js when installed (run by this same Node).

import { fileURLToPath } from "node:url";

export const PROGRAM = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "./main.ts" : "./main.js", import.meta.url),
);
