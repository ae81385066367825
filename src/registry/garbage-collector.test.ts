import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../apimachinery/types.ts";
import { eventually } from "../utils/testing-eventually.ts";
import { GarbageCollector } from "./garbage-collector.ts";
import type { GenericStore } from "./store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext, thingDefinition } from "./testing.ts";

const things = thingDefinition;

describe("GarbageCollector", () => {
  let env: TestRegistry;
  let store: GenericStore;
  let collector: GarbageCollector;

  before(async () => {
    env = await openTestRegistry([things]);
    store = env.store(things);
    collector = new GarbageCollector({ registry: env.registry });
    await collector.start();
  });
  after(async () => {
    collector.stop();
    await env.close();
  });

  const make = async (name: string, owners: KubeObject[] = [], block = false) =>
    store.create(
      testContext(),
      undefined,
      {
        apiVersion: "test.platform.sh/v1",
        kind: "Thing",
        metadata: {
          name,
          ownerReferences: owners.map((o) => ({
            apiVersion: "test.platform.sh/v1",
            kind: "Thing",
            name: o.metadata.name ?? "",
            uid: o.metadata.uid ?? "",
            blockOwnerDeletion: block || undefined,
          })),
        },
      },
      {},
    );
  const exists = async (name: string) => {
    try {
      await store.get(testContext(), { name });
      return true;
    } catch {
      return false;
    }
  };
  /** The collector reacts to watch events; wait until it settles on the expected state. */
  const settled = (check: () => Promise<boolean>) =>
    eventually(async () => {
      await collector.idle();
      return check();
    }, "the collector's expected state");

  it("deletes a dependent once its only owner is deleted (Background)", async () => {
    const owner = await make("bg-owner");
    await make("bg-child", [owner]);
    await store.delete(testContext(), { name: "bg-owner" }, { propagationPolicy: "Background" });
    await settled(async () => !(await exists("bg-child")));
  });

  it("keeps a dependent that still has a live owner and drops the dangling reference", async () => {
    const a = await make("two-a");
    const b = await make("two-b");
    await make("two-child", [a, b]);
    await store.delete(testContext(), { name: "two-a" }, {});
    await settled(async () => {
      const child = await store.get(testContext(), { name: "two-child" });
      return child.metadata.ownerReferences?.length === 1 && child.metadata.ownerReferences[0].name === "two-b";
    });
  });

  it("orphans dependents with propagationPolicy Orphan, then removes the owner", async () => {
    const owner = await make("orphan-owner");
    await make("orphan-child", [owner]);
    const pending = await store.delete(testContext(), { name: "orphan-owner" }, { propagationPolicy: "Orphan" });
    assert.deepEqual(pending.object.metadata.finalizers, ["orphan"]);
    await settled(async () => !(await exists("orphan-owner")));
    const child = await store.get(testContext(), { name: "orphan-child" });
    assert.equal(child.metadata.ownerReferences, undefined);
  });

  it("deletes blocking dependents before the owner with propagationPolicy Foreground", async () => {
    const owner = await make("fg-owner");
    await make("fg-child", [owner], true);
    const pending = await store.delete(testContext(), { name: "fg-owner" }, { propagationPolicy: "Foreground" });
    assert.deepEqual(pending.object.metadata.finalizers, ["foregroundDeletion"]);
    await settled(async () => !(await exists("fg-owner")) && !(await exists("fg-child")));
  });

  it("deletes a dependent created for an owner that no longer exists", async () => {
    const owner = await make("ghost-owner");
    await store.delete(testContext(), { name: "ghost-owner" }, {});
    await make("ghost-child", [owner]);
    await settled(async () => !(await exists("ghost-child")));
    assert.equal((await statusErrorOf(store.get(testContext(), { name: "ghost-child" }))).code, 404);
  });
});
