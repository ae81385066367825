import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeResourceConformance } from "../../../registry/conformance.ts";
import { statusErrorOf, testContext } from "../../../registry/testing.ts";
import { type Namespace, namespaceDefinition } from "./namespace.ts";
import { type KindHarness, kindHarness } from "./testing.ts";

const definition = namespaceDefinition;
const namespace = (name: string, spec?: Namespace["spec"]): Namespace => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name },
  ...(spec ? { spec } : {}),
});

describeResourceConformance({
  definition,
  sample: (name) => namespace(name),
  changeSpec: (object) => {
    (object as Namespace).spec = { finalizers: ["kubernetes", "example.com/extra"] };
    object.metadata.labels = { changed: "yes" };
  },
});

describe("Namespace", () => {
  let h: KindHarness;
  before(async () => {
    h = await kindHarness(definition);
  });
  after(() => h.close());

  it("create() makes it Active with the kubernetes finalizer in spec", async () => {
    const created = (await h.create(namespace("fresh"))) as Namespace;
    assert.equal(created.status?.phase, "Active");
    assert.deepEqual(created.spec?.finalizers, ["kubernetes"]);
    const more = (await h.create(namespace("more", { finalizers: ["example.com/x"] }))) as Namespace;
    assert.deepEqual(more.spec?.finalizers, ["example.com/x", "kubernetes"]);
  });

  it("create() refuses a name that is not a DNS label", async () => {
    assert.deepEqual(await h.invalid(h.create(namespace("a.b"))), [
      'metadata.name: Invalid value: "a.b": must not contain dots',
    ]);
  });

  it("create() refuses spec finalizers that are not qualified", async () => {
    assert.deepEqual(await h.invalid(h.create(namespace("odd", { finalizers: ["custom"] }))), [
      'spec.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });

  it("update() keeps the kubernetes finalizer and the status from the stored namespace", async () => {
    const created = (await h.create(namespace("kept"))) as Namespace;
    created.spec = { finalizers: ["example.com/extra"] };
    created.status = { phase: "Terminating" };
    const updated = (await h.update(created)) as Namespace;
    assert.deepEqual(updated.spec?.finalizers, ["example.com/extra", "kubernetes"]);
    assert.equal(updated.status?.phase, "Active");
  });

  it("delete() of default, kube-system and kube-public answers 403", async () => {
    const store = h.env.store(definition);
    await h.create(namespace("kube-system"));
    const error = await statusErrorOf(store.delete(testContext(), { name: "kube-system" }, {}));
    assert.equal(error.code, 403);
    assert.equal(error.message, 'namespaces "kube-system" is forbidden: this namespace may not be deleted');
  });
});
