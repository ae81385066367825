// The write gate (the platform's store quota): creates and updates are asked, deletes and the updates that carry a
// deletion out are not, so a store over its quota can still be emptied.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { errors } from "../apimachinery/errors.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { Registry } from "./registry.ts";
import type { GenericStore } from "./store.ts";
import { statusErrorOf, testContext, thingDefinition } from "./testing.ts";

const thing = (name: string, finalizers?: string[]): KubeObject => ({
  apiVersion: "test.platform.sh/v1",
  kind: "Thing",
  metadata: { name, ...(finalizers ? { finalizers } : {}) },
  spec: { size: 1 },
});

describe("Registry with a writeGate", () => {
  let storage: KeyValueStore;
  let things: GenericStore;
  let closed = true;
  const gate = () => {
    if (!closed) throw errors.storeQuotaReached(1024 * 1024);
  };

  before(async () => {
    storage = await openSqliteStore({ path: ":memory:" });
    const registry = new Registry(storage, { writeGate: gate });
    registry.register(thingDefinition);
    things = registry.genericStore(thingDefinition.group, thingDefinition.plural)!;
  });
  after(() => storage.close());

  it("GenericStore.create() and update() are refused with the gate's Status while it is shut", async () => {
    const ctx = testContext();
    await things.create(ctx, undefined, thing("a"), {});
    closed = false;
    try {
      const refused = await statusErrorOf(things.create(testContext(), undefined, thing("b"), {}));
      assert.equal(refused.status.code, 507);
      assert.match(refused.message, /reached its quota of 1\.0 MiB \(--store-quota-bytes\)/);
      const current = await things.get(testContext(), { name: "a" });
      const changed = { ...structuredClone(current), spec: { size: 2 } };
      assert.equal((await statusErrorOf(things.update(testContext(), { name: "a" }, changed, {}))).status.code, 507);
      const patch = things.patch(testContext(), { name: "a" }, "merge", { spec: { size: 3 } }, {});
      assert.equal((await statusErrorOf(patch)).status.code, 507);
      // A dry run stores nothing, and an update that changes nothing writes nothing: neither is asked.
      await things.create(testContext(), undefined, thing("c"), { dryRun: true });
      await things.update(testContext(), { name: "a" }, structuredClone(current), {});
      assert.deepEqual((await things.get(testContext(), { name: "a" })).spec, { size: 1 });
    } finally {
      closed = true;
    }
  });

  it("GenericStore.delete() goes through, finalizers and all, while the gate is shut", async () => {
    await things.create(testContext(), undefined, thing("held", ["example.com/hold"]), {});
    await things.create(testContext(), undefined, thing("plain"), {});
    closed = false;
    try {
      assert.equal((await things.delete(testContext(), { name: "plain" }, {})).removed, true);
      // Held by a finalizer: the delete sets deletionTimestamp (an update the gate is not asked about) ...
      assert.equal((await things.delete(testContext(), { name: "held" }, {})).removed, false);
      const held = await things.get(testContext(), { name: "held" });
      assert.ok(held.metadata.deletionTimestamp);
      // ... and the controller's update removing the finalizer completes the deletion.
      await things.update(
        testContext(),
        { name: "held" },
        { ...held, metadata: { ...held.metadata, finalizers: [] } },
        {},
      );
      await statusErrorOf(things.get(testContext(), { name: "held" }));
    } finally {
      closed = true;
    }
  });
});
