import assert from "node:assert/strict";
import { test } from "node:test";
import { RUNTIME_NODE_FLAGS } from "../virtualcluster/runtime-node-flags.ts";
import { PLATFORM_NODE_FLAGS } from "./platform-memory.ts";
import { processFlagsFor } from "./process-settings.ts";

const line = (...args: string[]) => ["node", "virtualcluster", ...args];

test("processFlagsFor() gives the long-running commands their settings", () => {
  assert.equal(processFlagsFor(line("platform", "start", "--port", "0")), PLATFORM_NODE_FLAGS);
  assert.equal(processFlagsFor(line("run", "--name", "dev")), RUNTIME_NODE_FLAGS);
  assert.equal(processFlagsFor(line("agent", "--data-dir", "x")), RUNTIME_NODE_FLAGS);
});

test("processFlagsFor() leaves every other command as it was started", () => {
  for (const args of [[], ["--help"], ["platform"], ["platform", "login"], ["create", "run"], ["version"], ["start"]]) {
    assert.equal(processFlagsFor(line(...args)), undefined, args.join(" "));
  }
});
