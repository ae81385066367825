import assert from "node:assert/strict";
import { test } from "node:test";
import { hasRuntimeNodeFlags, RUNTIME_NODE_FLAGS } from "./runtime-node-flags.ts";

test("hasRuntimeNodeFlags() sees the flags, or a young-generation size of the user's own, on the command line or in NODE_OPTIONS", () => {
  assert.equal(hasRuntimeNodeFlags([], undefined), false);
  assert.equal(hasRuntimeNodeFlags(["--inspect"], "--enable-source-maps"), false);
  assert.equal(hasRuntimeNodeFlags([...RUNTIME_NODE_FLAGS], undefined), true);
  assert.equal(hasRuntimeNodeFlags([], "--enable-source-maps --max-semi-space-size=16"), true);
});
