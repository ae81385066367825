import assert from "node:assert/strict";
import { after, test } from "node:test";
import { type CompiledPatchSet, compilePatches } from "../patches/compile.ts";
import { loadEngine } from "../patches/sandbox/engine.ts";
import type { Patch } from "../patches/types.ts";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../translate/constants.ts";
import { createTranslator } from "../translate/translator.ts";
import { carryBack, governance, hostSnapshotOf, reverseFieldPatches, virtualSnapshotOf } from "./carry-back.ts";
import { OBJECT_UID_ANNOTATION } from "./constants.ts";
import type { WireObject } from "./types.ts";

// Expressions compile on the shared QuickJS engine, which loads on demand.
await loadEngine();

const translator = createTranslator({ name: "vc", namespace: "vc-host" });
const sets: CompiledPatchSet[] = [];
after(() => {
  for (const set of sets) set.dispose();
});
const compile = (patches: Patch[]) => {
  const set = compilePatches(patches, "sync.toHost.endpoints.patches");
  sets.push(set);
  return set;
};

const object = (labels: Record<string, string>, annotations: Record<string, string>, port = "http"): WireObject => ({
  metadata: { name: "x", namespace: "default", labels, annotations },
  subsets: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ name: port, port: 80 }] }],
});
const marks = { [MANAGED_BY_LABEL]: "vc", [NAMESPACE_LABEL]: "default" };

function input(
  patches: CompiledPatchSet,
  virtualThen: WireObject,
  hostThen: WireObject,
  virtual: WireObject,
  host: WireObject,
) {
  const reverse = reverseFieldPatches(patches);
  const hostLast = hostSnapshotOf(hostThen, translator, reverse);
  return {
    virtual,
    host,
    hostNow: hostSnapshotOf(host, translator, reverse),
    reversed: host,
    last: { virtual: virtualSnapshotOf(virtualThen, hostLast), host: hostLast },
    translator,
    patches,
  };
}

test("carryBack() brings back unpatched label and annotation changes, never the markers or the syncer's own", () => {
  const patches = compile([]);
  const then = object({ app: "web" }, { note: "a" });
  const hostThen = object({ app: "web", ...marks }, { note: "a", [OBJECT_UID_ANNOTATION]: "u" });
  const host = object(
    { app: "web", tier: "front", [MANAGED_BY_LABEL]: "other" },
    { note: "b", [OBJECT_UID_ANNOTATION]: "x" },
  );
  const back = carryBack(input(patches, then, hostThen, then, host));
  assert.deepEqual(back, { labels: { app: "web", tier: "front" }, annotations: { note: "b" }, fields: [] });
});

test("carryBack() lets a virtual change win over a host change of the same key", () => {
  const patches = compile([]);
  const then = object({}, { note: "a" });
  const now = object({}, { note: "virtual" });
  assert.equal(
    carryBack(input(patches, then, object(marks, { note: "a" }), now, object(marks, { note: "host" }))),
    undefined,
  );
});

test("carryBack() carries nothing back through a patch without reverseExpression (rule 2), and uses one that has it", () => {
  const forward = compile([{ path: 'metadata.annotations["dns"]', expression: "value" }]);
  const then = object({}, { dns: "a.default.svc" });
  assert.equal(
    carryBack(input(forward, then, object(marks, { dns: "x" }), then, object(marks, { dns: "changed" }))),
    undefined,
  );
  assert.equal(governance(forward, ["metadata", "annotations", "dns"]), "forward-only");
  const both = compile([{ path: "metadata.annotations[*]", expression: "value", reverseExpression: "value" }]);
  assert.equal(governance(both, ["metadata", "annotations", "dns"]), "reverse");
  const back = carryBack(input(both, then, object(marks, { dns: "x" }), then, object(marks, { dns: "changed" })));
  assert.deepEqual(back?.annotations, { dns: "changed" });
});

test("carryBack() carries a change back wherever a reverseExpression's path points", () => {
  const patches = compile([
    { path: "subsets[*].ports[*].name", expression: '"h" + value', reverseExpression: "value.slice(1)" },
  ]);
  const then = object({}, {}, "http");
  const hostThen = object(marks, {}, "hhttp");
  const host = object(marks, {}, "hmetrics");
  const changed = input(patches, then, hostThen, then, host);
  const back = carryBack({ ...changed, reversed: object(marks, {}, "metrics") });
  assert.deepEqual(back?.fields, [{ keys: ["subsets", "0", "ports", "0", "name"], value: "metrics" }]);
  // Changed on the virtual side meanwhile: the virtual value wins.
  const both = input(patches, then, hostThen, object({}, {}, "admin"), host);
  assert.equal(carryBack({ ...both, reversed: object(marks, {}, "metrics") }), undefined);
});

test("carryBack() changes nothing without a last sync", () => {
  const patches = compile([]);
  const changed = input(patches, object({}, {}), object(marks, {}), object({}, {}), object({ ...marks, a: "b" }, {}));
  assert.equal(carryBack({ ...changed, last: undefined }), undefined);
});
