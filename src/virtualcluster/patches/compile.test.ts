import assert from "node:assert/strict";
import { test } from "node:test";
import { compilePatches } from "./compile.ts";
import { PatchValidationError } from "./errors.ts";
import { loadEngine } from "./sandbox/engine.ts";

// Expressions compile on the shared QuickJS engine, which loads on demand.
await loadEngine();

const LIST = "sync.toHost.endpoints.patches";

function problems(patches: Parameters<typeof compilePatches>[0]): string[] {
  try {
    compilePatches(patches, LIST).dispose();
  } catch (error) {
    assert.ok(error instanceof PatchValidationError, String(error));
    return error.problems.map((problem) => problem.text);
  }
  return [];
}

test("compilePatches() compiles each expression once per direction", () => {
  const set = compilePatches(
    [
      { path: "a", expression: "value + 1", reverseExpression: "value - 1" },
      { path: "b", expression: "context.path" },
      { path: "c", labels: {} },
    ],
    LIST,
  );
  assert.deepEqual(set.patches[0].expressions, { toHost: 0, toVirtual: 1 });
  assert.deepEqual(set.patches[1].expressions, { toHost: 2 });
  assert.equal(set.patches[2].mode, "labels");
  assert.equal(set.contextUse, "light");
  assert.equal(set.patches[1].contextUse.toHost, "light");
  assert.deepEqual(set.batches.toHost, [[0, 1], [2]]);
  assert.deepEqual(set.batches.toVirtual, [[0], [2]]);
  assert.ok(set.sandbox);
  set.dispose();
});

test("compilePatches() needs no sandbox without expressions", () => {
  const set = compilePatches([{ path: "a", reference: { apiVersion: "v1", kind: "Secret" } }], LIST);
  assert.equal(set.sandbox, undefined);
  assert.equal(set.patches[0].reference?.kind, "Secret");
  set.dispose();
  assert.equal(compilePatches(undefined, LIST).patches.length, 0);
});

test("compilePatches() reports expression syntax errors with the list path", () => {
  assert.deepEqual(problems([{ path: "a", expression: "value +" }]), [
    "sync.toHost.endpoints.patches[0].expression: syntax error: Unexpected token (line 1, column 8)",
  ]);
  assert.deepEqual(problems([{ path: "a", expression: "value", reverseExpression: "let x = 1" }]), [
    "sync.toHost.endpoints.patches[0].reverseExpression: only a single expression is allowed, not a variable declaration",
  ]);
});

test("compilePatches() reports every problem of the list in one error, in list order", () => {
  assert.deepEqual(
    problems([
      { path: "a", expression: "value" },
      { path: "b", expression: "import('fs')" },
      { path: "a", expression: "value;;" },
      { path: "metadata.name", expression: "value" },
    ]),
    [
      "sync.toHost.endpoints.patches[1].expression: import() is not allowed: modules cannot be loaded",
      'sync.toHost.endpoints.patches[0] and sync.toHost.endpoints.patches[2] have the same path "a"',
      "sync.toHost.endpoints.patches[2].expression: only a single expression is allowed, found 2 statements",
      'sync.toHost.endpoints.patches[3].path: Invalid value: "metadata.name": metadata.name and metadata.namespace are set by the syncer and cannot be patched',
    ],
  );
});

test("compilePatches() puts all problems in the error message, one per line", () => {
  assert.throws(
    () => compilePatches([{ path: "a" }, { path: "b", expression: "(" }], LIST),
    (error: Error) => error.message.split("\n").length === 2,
  );
});
