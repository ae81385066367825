// Queued patches of one object share a commit, with exactly the results of running them one after another.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../apimachinery/types.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { eventually } from "../utils/testing-eventually.ts";
import { Registry } from "./registry.ts";
import type { GenericStore } from "./store.ts";
import { statusErrorOf, testContext } from "./testing.ts";
import type { ApiWatchEvent, ResourceDefinition } from "./types.ts";

const gadgets: ResourceDefinition = {
  group: "test.platform.sh",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  singular: "gadget",
  namespaced: false,
  description: "A test kind.",
  schema: { spec: { type: "object", properties: { size: { type: "integer" } } } },
  strategy: {},
};

const gadget = (name: string): KubeObject => ({
  apiVersion: "test.platform.sh/v1",
  kind: "Gadget",
  metadata: { name },
  spec: { size: 1 },
});

const label = (key: string, value = "v") => ({ metadata: { labels: { [key]: value } } });

describe("GenericStore chained patches", () => {
  let storage: KeyValueStore;
  let store: GenericStore;
  let chains = 0;
  before(async () => {
    const real = await openSqliteStore({ path: ":memory:" });
    // Counts the shared commits; everything else is the real store.
    storage = Object.assign(Object.create(real) as KeyValueStore, {
      updateChain: (key: string, values: string[], revision: number) => {
        chains++;
        return real.updateChain!(key, values, revision);
      },
    });
    const registry = new Registry(storage);
    registry.register(gadgets);
    store = registry.genericStore(gadgets.group, gadgets.plural)!;
  });
  after(() => storage.close());

  const patch = (name: string, body: unknown, type: "merge" | "json" = "merge", dryRun = false) =>
    store.patch(testContext(), { name }, type, body, { dryRun });

  it("patch() of many queued patches stores each as its own version, in order, in fewer commits", async () => {
    const created = await store.create(testContext(), undefined, gadget("many"), {});
    const events: ApiWatchEvent[] = [];
    const handle = await store.watch(
      testContext(),
      { resourceVersion: created.metadata.resourceVersion, fieldSelector: "metadata.name=many" },
      { send: (event) => events.push(event) > 0, end: () => {} },
    );
    chains = 0;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => patch("many", label(`k${i}`))));
    const revisions = results.map((r) => Number(r.object.metadata.resourceVersion));
    const first = Number(created.metadata.resourceVersion) + 1;
    assert.deepEqual(
      revisions,
      Array.from({ length: 20 }, (_, i) => first + i),
      "one revision per patch, in order",
    );
    results.forEach((result, i) => {
      assert.deepEqual(
        Object.keys(result.object.metadata.labels ?? {}),
        Array.from({ length: i + 1 }, (_, j) => `k${j}`),
      );
      assert.equal(result.created, false);
    });
    assert.ok(chains >= 1 && chains < 20, `shared commits: ${chains}`);
    const stored = await store.get(testContext(), { name: "many" });
    assert.deepEqual(stored, results[19].object);
    await eventually(() => events.length >= 20, "the twenty patches' events");
    handle.close();
    assert.deepEqual(
      events.map((e) => [e.type, (e.object as KubeObject).metadata.resourceVersion]),
      revisions.map((rv) => ["MODIFIED", String(rv)]),
    );
  });

  it("patch() answers a failing patch in a queue with its own error and applies the others", async () => {
    await store.create(testContext(), undefined, gadget("mixed"), {});
    const settled = await Promise.allSettled([
      patch("mixed", label("a")),
      patch("mixed", { spec: { size: "big" } }),
      patch("mixed", label("c")),
    ]);
    assert.equal(settled[0].status, "fulfilled");
    assert.equal(settled[1].status, "rejected");
    assert.equal((settled[1] as PromiseRejectedResult).reason.code, 422);
    assert.equal(settled[2].status, "fulfilled");
    const stored = await store.get(testContext(), { name: "mixed" });
    assert.deepEqual(stored.metadata.labels, { a: "v", c: "v" });
    assert.equal((stored.spec as { size: number }).size, 1);
  });

  it("patch() checks a resourceVersion precondition against the versions committed before it", async () => {
    const created = await store.create(testContext(), undefined, gadget("pre"), {});
    const stale = { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { late: "x" } } };
    const [first, second] = await Promise.allSettled([patch("pre", label("first")), patch("pre", stale)]);
    assert.equal(first.status, "fulfilled");
    assert.equal(second.status, "rejected");
    assert.equal((second as PromiseRejectedResult).reason.code, 409, "the version it names was replaced first");
    const current = await store.get(testContext(), { name: "pre" });
    const fresh = { metadata: { resourceVersion: current.metadata.resourceVersion, labels: { ok: "y" } } };
    const [, withFresh] = await Promise.all([patch("pre", fresh), patch("pre", label("other"))]);
    assert.deepEqual(withFresh.object.metadata.labels, { first: "v", ok: "y", other: "v" });
  });

  it("patch() with dryRun in a queue answers the state after the patches before it and stores nothing", async () => {
    await store.create(testContext(), undefined, gadget("dry"), {});
    const [one, dry, two] = await Promise.all([
      patch("dry", label("one")),
      patch("dry", label("dry"), "merge", true),
      patch("dry", label("two")),
    ]);
    assert.deepEqual(dry.object.metadata.labels, { one: "v", dry: "v" });
    assert.equal(dry.object.metadata.resourceVersion, one.object.metadata.resourceVersion);
    assert.deepEqual(two.object.metadata.labels, { one: "v", two: "v" });
  });

  it("patch() that changes nothing answers the version the patch before it wrote", async () => {
    await store.create(testContext(), undefined, gadget("same"), {});
    const [changed, unchanged] = await Promise.all([patch("same", label("x")), patch("same", label("x"))]);
    assert.equal(unchanged.object.metadata.resourceVersion, changed.object.metadata.resourceVersion);
    assert.deepEqual(unchanged.object, changed.object);
    assert.notEqual(unchanged.object, changed.object);
  });

  it("patch() removing the last finalizer after a queued patch completes the deletion; later ones get 404", async () => {
    const withFinalizer = gadget("final");
    withFinalizer.metadata.finalizers = ["test.platform.sh/hold"];
    await store.create(testContext(), undefined, withFinalizer, {});
    await store.delete(testContext(), { name: "final" }, {});
    const settled = await Promise.allSettled([
      patch("final", label("before")),
      patch("final", [{ op: "remove", path: "/metadata/finalizers" }], "json"),
      patch("final", label("after")),
    ]);
    assert.equal(settled[0].status, "fulfilled");
    assert.equal(settled[1].status, "fulfilled");
    assert.equal(settled[2].status, "rejected");
    assert.equal((settled[2] as PromiseRejectedResult).reason.code, 404);
    assert.equal((await statusErrorOf(store.get(testContext(), { name: "final" }))).code, 404);
  });
});
