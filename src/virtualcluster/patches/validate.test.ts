import assert from "node:assert/strict";
import { test } from "node:test";
import { validatePatchList } from "./validate.ts";

const LIST = "sync.toHost.endpoints.patches";
const texts = (patches: unknown[]) => validatePatchList(patches, LIST).map((problem) => problem.text);

test("validatePatchList() accepts one mode per patch, with expression and reverseExpression as one", () => {
  assert.deepEqual(
    texts([
      { path: "a", expression: "value", reverseExpression: "value" },
      { path: "b", reverseExpression: "value" },
      { path: "c", labels: {} },
      { path: "d", reference: { apiVersion: "v1", kind: "Secret" } },
    ]),
    [],
  );
});

test("validatePatchList() rejects a patch with two modes with the reference text", () => {
  assert.deepEqual(texts([{ path: "a", expression: "value", labels: {} }]), [
    "sync.toHost.endpoints.patches[0] can only use one of: expression, labels or reference",
  ]);
  assert.deepEqual(texts([{ path: "a", labels: {}, reference: { apiVersion: "v1", kind: "Secret" } }]), [
    "sync.toHost.endpoints.patches[0] can only use one of: expression, labels or reference",
  ]);
});

test("validatePatchList() rejects a patch with no mode with the reference text", () => {
  assert.deepEqual(texts([{ path: "a" }, { path: "b", expression: "" }]), [
    "sync.toHost.endpoints.patches[0] need to use one of: expression, labels or reference",
    "sync.toHost.endpoints.patches[1] need to use one of: expression, labels or reference",
  ]);
});

test("validatePatchList() rejects duplicate paths with the reference text", () => {
  assert.deepEqual(
    texts([
      { path: "metadata.annotations", expression: "value" },
      { path: "spec", expression: "value" },
      { path: "metadata.annotations", labels: {} },
    ]),
    ['sync.toHost.endpoints.patches[0] and sync.toHost.endpoints.patches[2] have the same path "metadata.annotations"'],
  );
});

test("validatePatchList() rejects metadata.name and metadata.namespace in any spelling", () => {
  for (const path of ["metadata.name", "metadata.namespace", 'metadata["name"]', '"metadata".namespace']) {
    assert.deepEqual(texts([{ path, expression: "value" }]), [
      `sync.toHost.endpoints.patches[0].path: Invalid value: ${JSON.stringify(path)}: metadata.name and metadata.namespace are set by the syncer and cannot be patched`,
    ]);
  }
  assert.deepEqual(texts([{ path: "metadata.labels", expression: "value" }]), []);
});

test("validatePatchList() reports path syntax errors at the path field", () => {
  assert.deepEqual(texts([{ path: "a[b[0]]", expression: "value" }]), [
    'sync.toHost.endpoints.patches[0].path: invalid path "a[b[0]]": nested "[" at offset 3',
  ]);
  assert.deepEqual(texts([{ expression: "value" }]), ["sync.toHost.endpoints.patches[0].path: Required value"]);
});

test("validatePatchList() requires apiVersion and kind on references", () => {
  assert.deepEqual(texts([{ path: "a", reference: { kind: "Secret" } }]), [
    "sync.toHost.endpoints.patches[0].reference.apiVersion: Required value: a reference patch needs apiVersion and kind",
  ]);
  assert.deepEqual(texts([{ path: "a", reference: {} }]).length, 2);
});

test("validatePatchList() requires namePath when another *Path is set", () => {
  for (const key of ["apiVersionPath", "kindPath", "namespacePath"]) {
    assert.deepEqual(texts([{ path: "a", reference: { apiVersion: "v1", kind: "Secret", [key]: "x" } }]), [
      "sync.toHost.endpoints.patches[0].reference.namePath: Required value: namePath is required when apiVersionPath, kindPath or namespacePath is set",
    ]);
  }
  assert.deepEqual(
    texts([{ path: "a", reference: { apiVersion: "v1", kind: "Secret", namePath: "name", namespacePath: "ns" } }]),
    [],
  );
  assert.deepEqual(texts([{ path: "a", reference: { apiVersion: "v1", kind: "Secret", namePath: "a]" } }]), [
    'sync.toHost.endpoints.patches[0].reference.namePath: invalid path "a]": unexpected "]" without "[" at offset 1',
  ]);
});

test("validatePatchList() reports every problem, in list order", () => {
  assert.deepEqual(texts([{ path: "x", expression: "v", labels: {} }, "nope", { path: "x[", labels: [] }]), [
    "sync.toHost.endpoints.patches[0] can only use one of: expression, labels or reference",
    "sync.toHost.endpoints.patches[1]: Invalid value: must be an object",
    'sync.toHost.endpoints.patches[2].path: invalid path "x[": unclosed "[" at offset 1',
    "sync.toHost.endpoints.patches[2].labels: Invalid value: must be an object (labels: {})",
  ]);
});
