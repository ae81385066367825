import assert from "node:assert/strict";
import { test } from "node:test";
import { missingRuntimeNodeFlags, RUNTIME_NODE_FLAGS, runtimeEnvironment } from "./runtime-node-flags.ts";

test("missingRuntimeNodeFlags() lists the flags not given on the command line or in NODE_OPTIONS; a value of the user's own counts", () => {
  assert.deepEqual(missingRuntimeNodeFlags([], undefined), RUNTIME_NODE_FLAGS);
  assert.deepEqual(missingRuntimeNodeFlags(["--inspect"], "--enable-source-maps"), RUNTIME_NODE_FLAGS);
  assert.deepEqual(missingRuntimeNodeFlags([...RUNTIME_NODE_FLAGS], undefined), []);
  assert.deepEqual(missingRuntimeNodeFlags([], "--enable-source-maps --max_semi_space_size=16"), ["--expose-gc"]);
  assert.deepEqual(missingRuntimeNodeFlags(["--expose-gc"], undefined), ["--max-semi-space-size=4"]);
});

test("runtimeEnvironment() adds glibc's one malloc arena and fixed mmap and trim thresholds, keeping the user's own settings", () => {
  const ours = "glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold=32768:glibc.malloc.trim_threshold=131072";
  assert.equal(runtimeEnvironment({ HOME: "/h" }).GLIBC_TUNABLES, ours);
  assert.equal(runtimeEnvironment({ HOME: "/h" }).HOME, "/h");
  assert.equal(
    runtimeEnvironment({ GLIBC_TUNABLES: "glibc.malloc.arena_max=8" }).GLIBC_TUNABLES,
    "glibc.malloc.arena_max=8:glibc.malloc.mmap_threshold=32768:glibc.malloc.trim_threshold=131072",
  );
  const complete = { GLIBC_TUNABLES: `glibc.pthread.rseq=0:${ours}` };
  assert.equal(runtimeEnvironment(complete), complete);
});

test("runtimeEnvironment() turns Node's compile cache off for the built JavaScript only, keeping the user's own setting", () => {
  const tunables = "glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold=32768:glibc.malloc.trim_threshold=131072";
  assert.equal(runtimeEnvironment({}, { builtJavaScript: true }).NODE_DISABLE_COMPILE_CACHE, "1");
  assert.equal(runtimeEnvironment({}, { builtJavaScript: false }).NODE_DISABLE_COMPILE_CACHE, undefined);
  const complete = { GLIBC_TUNABLES: tunables };
  assert.deepEqual(runtimeEnvironment(complete, { builtJavaScript: true }), {
    ...complete,
    NODE_DISABLE_COMPILE_CACHE: "1",
  });
  const own = { GLIBC_TUNABLES: tunables, NODE_DISABLE_COMPILE_CACHE: "0" };
  assert.equal(runtimeEnvironment(own, { builtJavaScript: true }), own);
});
