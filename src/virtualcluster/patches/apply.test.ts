import assert from "node:assert/strict";
import { after, test } from "node:test";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../translate/constants.ts";
import { createTranslator } from "../translate/translator.ts";
import { applyPatches } from "./apply.ts";
import { type CompiledPatchSet, compilePatches } from "./compile.ts";
import { PatchApplyError } from "./errors.ts";
import { loadEngine } from "./sandbox/engine.ts";
import type { ApplyOptions, Patch } from "./types.ts";

// Expressions compile on the shared QuickJS engine, which loads on demand.
await loadEngine();

const LIST = "sync.toHost.endpoints.patches";
const translator = createTranslator({ name: "vc", namespace: "vc-host" });
const vcluster = { name: "vc", namespace: "vc-host", config: { sync: { toHost: { endpoints: { enabled: true } } } } };
const sets: CompiledPatchSet[] = [];
after(() => {
  for (const set of sets) set.dispose();
});

function compile(patches: Patch[]): CompiledPatchSet {
  const set = compilePatches(patches, LIST);
  sets.push(set);
  return set;
}

const options = (overrides: Partial<ApplyOptions> = {}): ApplyOptions => ({
  direction: "toHost",
  context: { vcluster, hostObject: null, virtualObject: null },
  translator,
  ...overrides,
});

const endpoints = () => ({
  apiVersion: "v1",
  kind: "Endpoints",
  metadata: { name: "web", namespace: "default", annotations: { "a.b/c": "x", keep: "y" }, labels: { app: "web" } },
  subsets: [
    { addresses: [{ ip: "10.0.0.1", hostname: "a" }, { ip: "10.0.0.2" }], ports: [{ port: 80 }] },
    { addresses: [{ ip: "10.0.1.1" }], notReadyAddresses: [{ ip: "10.0.1.9" }] },
  ],
});

test("applyPatches() applies a typical patch set: expressions and a wildcard", () => {
  const set = compile([
    { path: "metadata.annotations[*]", expression: "value.toUpperCase()" },
    { path: 'metadata.annotations["added"]', expression: "context.vcluster.name" },
    { path: "subsets[*].addresses[*].ip", expression: "context.path + '=' + value" },
    { path: "subsets[0].ports[0].port", expression: "value + 8000" },
  ]);
  const input = endpoints();
  const { object, references } = applyPatches(set, input, options());
  assert.deepEqual((object.metadata as Record<string, unknown>).annotations, { "a.b/c": "X", keep: "Y" });
  const subsets = object.subsets as { addresses: { ip: string }[]; ports?: { port: number }[] }[];
  assert.deepEqual(
    subsets.flatMap((subset) => subset.addresses.map((address) => address.ip)),
    ["subsets.0.addresses.0.ip=10.0.0.1", "subsets.0.addresses.1.ip=10.0.0.2", "subsets.1.addresses.0.ip=10.0.1.1"],
  );
  assert.equal(subsets[0].ports?.[0].port, 8080);
  assert.deepEqual(references, []);
  assert.deepEqual(input, endpoints(), "the caller's object is not modified");
});

test("applyPatches() uses expression toward the host and reverseExpression back, skipping a missing one", () => {
  const set = compile([
    { path: "metadata.labels.app", expression: "value + '-host'", reverseExpression: "value.replace(/-host$/, '')" },
    { path: "metadata.annotations.keep", expression: "'only-to-host'" },
  ]);
  const host = applyPatches(set, endpoints(), options()).object;
  assert.equal((host.metadata as { labels: { app: string } }).labels.app, "web-host");
  const back = applyPatches(set, host, options({ direction: "toVirtual" })).object;
  assert.equal((back.metadata as { labels: { app: string } }).labels.app, "web");
  assert.equal((back.metadata as { annotations: { keep: string } }).annotations.keep, "only-to-host");
});

test("applyPatches() removes fields whose expression returns null or undefined", () => {
  const set = compile([
    { path: "metadata.annotations.keep", expression: "null" },
    { path: "subsets[*].addresses[*]", expression: "value.hostname ? value : undefined" },
    { path: "subsets[1].notReadyAddresses", expression: "undefined" },
  ]);
  const { object } = applyPatches(set, endpoints(), options());
  assert.deepEqual((object.metadata as { annotations: object }).annotations, { "a.b/c": "x" });
  const subsets = object.subsets as Record<string, unknown>[];
  assert.deepEqual(subsets[0].addresses, [{ ip: "10.0.0.1", hostname: "a" }]);
  assert.deepEqual(subsets[1].addresses, []);
  assert.equal("notReadyAddresses" in subsets[1], false);
});

test("applyPatches() does nothing for missing paths, a final bracketed key included (not found: not applied)", () => {
  const set = compile([
    { path: "spec.missing.deep", expression: "'x'" },
    { path: "metadata.annotations.absent", expression: "'x'" },
    { path: 'metadata.annotations["present-now"]', expression: "require('fs')" },
    { path: 'metadata.missing["x"]', expression: "'x'" },
  ]);
  const { object } = applyPatches(set, endpoints(), options());
  assert.deepEqual((object.metadata as { annotations: object }).annotations, {
    "a.b/c": "x",
    keep: "y",
  });
  assert.equal("spec" in object, false);
  assert.equal("missing" in (object.metadata as object), false);
});

test("applyPatches() passes hostObject, virtualObject and the quoted context.path", () => {
  const set = compile([
    {
      path: 'metadata.annotations["a.b/c"]',
      expression: "[context.path, context.hostObject?.metadata.name, context.virtualObject?.metadata.name].join('|')",
    },
  ]);
  const virtualObject = endpoints();
  const hostObject = { metadata: { name: "web-x-default-x-vc" } };
  const { object } = applyPatches(set, endpoints(), options({ context: { vcluster, hostObject, virtualObject } }));
  assert.equal(
    (object.metadata as { annotations: Record<string, string> }).annotations["a.b/c"],
    'metadata.annotations."a.b/c"|web-x-default-x-vc|web',
  );
});

test("applyPatches() offers atob, btoa and virtualToHostDNS", () => {
  const set = compile([
    { path: "data.secret", expression: "btoa(atob(value) + '!')" },
    { path: "data.host", expression: "value ? virtualToHostDNS(value) : value" },
  ]);
  const { object } = applyPatches(
    set,
    {
      metadata: { name: "s", namespace: "default" },
      data: { secret: "bXktdmFsdWU=", host: "nginx.default.svc.cluster.local" },
    },
    options({ translator: createTranslator({ name: "vcluster", namespace: "vcluster-ns" }) }),
  );
  assert.deepEqual(object.data, {
    secret: Buffer.from("my-value!").toString("base64"),
    host: "nginx-x-default-x-vcluster.vcluster-ns.svc.cluster.local",
  });
});

test("applyPatches() fails naming the patch, the path and the reason", () => {
  const set = compile([
    { path: "metadata.labels.app", expression: "value" },
    { path: "subsets[*].addresses[*].ip", expression: "value.split('.')[3] === '2' ? value.nope.x : value" },
  ]);
  assert.throws(
    () => applyPatches(set, endpoints(), options()),
    (error: unknown) => {
      assert.ok(error instanceof PatchApplyError);
      assert.equal(error.field, "sync.toHost.endpoints.patches[1].expression");
      assert.equal(error.path, "subsets.0.addresses.1.ip");
      assert.equal(
        error.message,
        "sync.toHost.endpoints.patches[1].expression (at subsets.0.addresses.1.ip): TypeError: cannot read property 'x' of undefined",
      );
      return true;
    },
  );
});

test("applyPatches() contains a runaway expression and keeps working for the next object", () => {
  const set = compile([
    { path: "metadata.labels.app", expression: "value === 'loop' ? (() => { for (;;) {} })() : value + '!'" },
  ]);
  const looping = { metadata: { name: "a", labels: { app: "loop" } } };
  assert.throws(() => applyPatches(set, looping, options()), {
    name: "PatchApplyError",
    message: /CPU time limit of 100 ms/,
  });
  const { object } = applyPatches(set, { metadata: { name: "b", labels: { app: "ok" } } }, options());
  assert.equal((object.metadata as { labels: { app: string } }).labels.app, "ok!");
});

test("applyPatches() refuses patches that change metadata.name or metadata.namespace", () => {
  const set = compile([{ path: "metadata", expression: "({ ...value, name: 'other' })" }]);
  assert.throws(() => applyPatches(set, endpoints(), options()), {
    message: /patches\[0\]\.expression \(at metadata\): the patch changed metadata.name or metadata.namespace/,
  });
});

test("applyPatches() replaces the whole object for the empty path, and only with an object", () => {
  const set = compile([{ path: "", expression: "({ ...value, extra: context.path === '' })" }]);
  assert.equal(applyPatches(set, endpoints(), options()).object.extra, true);
  const bad = compile([{ path: "", expression: "null" }]);
  assert.throws(() => applyPatches(bad, endpoints(), options()), /must return an object/);
});

test("applyPatches() keeps __proto__ and constructor keys as plain data", () => {
  const set = compile([
    { path: 'data.map["__proto__"]', expression: "({ polluted: true })" },
    { path: 'data.map["constructor"]', expression: "({ prototype: { polluted: true } })" },
    { path: "spec", expression: 'JSON.parse(\'{"__proto__": {"polluted": true}}\')' },
  ]);
  const input = JSON.parse(
    '{"metadata": {"name": "x"}, "data": {"map": {"__proto__": 1, "constructor": 2}}, "spec": {}}',
  );
  const { object } = applyPatches(set, input, options());
  const map = (object.data as { map: object }).map;
  assert.deepEqual(Object.keys(map), ["__proto__", "constructor"]);
  assert.equal(Object.getPrototypeOf(map), Object.prototype);
  assert.equal(Object.getPrototypeOf(object.spec), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(Object.getOwnPropertyDescriptor(object.spec, "__proto__")?.value, { polluted: true });
});

test("applyPatches() refuses a label or annotation value that is not a string, naming the patch and the path", () => {
  const set = compile([{ path: "metadata.labels[*]", expression: "value === 'n' ? 5 : value" }]);
  assert.throws(
    () => applyPatches(set, { metadata: { name: "x", labels: { a: "s", "b.io/c": "n" } } }, options()),
    (error: unknown) =>
      error instanceof PatchApplyError &&
      error.field === "sync.toHost.endpoints.patches[0].expression" &&
      error.path === 'metadata.labels."b.io/c"' &&
      /must be a string .* not number/.test(error.reason),
  );
});

test("applyPatches() translates references in single-namespace mode and reports them", () => {
  const set = compile([
    { path: "spec.secretName", reference: { apiVersion: "v1", kind: "Secret" } },
    {
      path: "spec.refs[*]",
      reference: {
        apiVersion: "v1",
        kind: "ConfigMap",
        kindPath: "kind",
        namePath: "name",
        namespacePath: "namespace",
      },
    },
  ]);
  const input = {
    metadata: { name: "x", namespace: "default" },
    spec: {
      secretName: "db-password",
      refs: [{ name: "settings", namespace: "prod" }, { kind: "Secret", name: "tls" }, { name: "" }],
    },
  };
  const { object, references } = applyPatches(set, input, options());
  assert.deepEqual(object.spec, {
    secretName: "db-password-x-default-x-vc",
    refs: [
      { name: "settings-x-prod-x-vc", namespace: "vc-host" },
      { kind: "Secret", name: "tls-x-default-x-vc" },
      { name: "" },
    ],
  });
  assert.deepEqual(references, [
    {
      apiVersion: "v1",
      kind: "Secret",
      source: { name: "db-password", namespace: "default" },
      target: { name: "db-password-x-default-x-vc", namespace: "vc-host" },
      patch: "sync.toHost.endpoints.patches[0]",
      path: "spec.secretName",
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      source: { name: "settings", namespace: "prod" },
      target: { name: "settings-x-prod-x-vc", namespace: "vc-host" },
      patch: "sync.toHost.endpoints.patches[1]",
      path: "spec.refs.0.name",
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      source: { name: "tls", namespace: "default" },
      target: { name: "tls-x-default-x-vc", namespace: "vc-host" },
      patch: "sync.toHost.endpoints.patches[1]",
      path: "spec.refs.1.name",
    },
  ]);
});

test("applyPatches() maps references back to virtual names, leaving unknown host names alone", () => {
  const set = compile([{ path: "spec.secrets[*]", reference: { apiVersion: "v1", kind: "Secret" } }]);
  const host = {
    metadata: { name: "x-x-default-x-vc", namespace: "vc-host" },
    spec: { secrets: ["db-x-default-x-vc", "host-only"] },
  };
  const { object, references } = applyPatches(
    set,
    host,
    options({
      direction: "toVirtual",
      context: { vcluster, hostObject: host, virtualObject: { metadata: { namespace: "default" } } },
    }),
  );
  assert.deepEqual((object.spec as { secrets: string[] }).secrets, ["db", "host-only"]);
  assert.deepEqual(
    references.map((reference) => reference.target),
    [{ name: "db", namespace: "default" }],
  );
});

test("applyPatches() keeps names of references in multi-namespace mode", () => {
  const multi = createTranslator({ name: "vc", namespace: "vc-host", multiNamespace: true });
  const set = compile([
    { path: "spec.ref", reference: { apiVersion: "v1", kind: "Secret", namePath: "name", namespacePath: "namespace" } },
  ]);
  const { object, references } = applyPatches(
    set,
    { metadata: { name: "x", namespace: "default" }, spec: { ref: { name: "db", namespace: "prod" } } },
    options({ translator: multi }),
  );
  assert.deepEqual(object.spec, { ref: { name: "db", namespace: multi.hostNamespace("prod") } });
  assert.deepEqual(references[0].target, { name: "db", namespace: multi.hostNamespace("prod") });
});

test("applyPatches() translates label patches like synced labels, both ways", () => {
  const set = compile([
    { path: "spec.selector", labels: {} },
    { path: "spec.podSelector", labels: {} },
  ]);
  const input = {
    metadata: { name: "x", namespace: "default" },
    spec: {
      selector: { app: "web", release: "r1" },
      podSelector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "release", operator: "Exists" }] },
    },
  };
  const host = applyPatches(set, input, options()).object;
  const spec = host.spec as Record<string, Record<string, unknown>>;
  assert.deepEqual(spec.selector, {
    app: "web",
    [translator.hostLabelKey("release")]: "r1",
    [MANAGED_BY_LABEL]: "vc",
    [NAMESPACE_LABEL]: "default",
  });
  assert.deepEqual((spec.podSelector.matchExpressions as { key: string }[])[0].key, translator.hostLabelKey("release"));
  const back = applyPatches(set, host, options({ direction: "toVirtual" })).object;
  assert.deepEqual(back.spec, input.spec);
});

test("applyPatches() fails a label patch on a value that is not a selector", () => {
  const set = compile([{ path: "spec.selector", labels: {} }]);
  assert.throws(() => applyPatches(set, { metadata: { name: "x" }, spec: { selector: "app=web" } }, options()), {
    message: /^sync.toHost.endpoints.patches\[0\].labels \(at spec.selector\): the value is not a label selector/,
  });
});
