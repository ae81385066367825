// Generic store rules on a namespaced test kind with a status subresource, and the conformance suite for it.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../apimachinery/types.ts";
import { describeResourceConformance } from "./conformance.ts";
import type { GenericStore } from "./store.ts";
import { openTestRegistry, statusErrorOf, type TestRegistry, testContext } from "./testing.ts";
import type { ResourceDefinition } from "./types.ts";

const widgets: ResourceDefinition = {
  group: "test.platform.sh",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  singular: "widget",
  namespaced: true,
  description: "A test kind.",
  statusSubresource: true,
  schema: {
    spec: { type: "object", properties: { size: { type: "integer" }, color: { type: "string" } } },
    status: { type: "object", properties: { phase: { type: "string" } } },
  },
  strategy: {},
};

const widget = (name: string, size = 1): KubeObject => ({
  apiVersion: "test.platform.sh/v1",
  kind: "Widget",
  metadata: { name, namespace: "ns" },
  spec: { size },
});

describeResourceConformance({
  definition: widgets,
  sample: (name) => widget(name),
  changeSpec: (object) => {
    (object.spec as { size: number }).size += 1;
  },
});

describe("GenericStore status subresource", () => {
  let env: TestRegistry;
  let store: GenericStore;
  before(async () => {
    env = await openTestRegistry([widgets]);
    store = env.store(widgets);
  });
  after(() => env.close());

  it("create() drops status; update() of the main resource keeps the stored status", async () => {
    const created = await store.create(testContext(), "ns", { ...widget("s1"), status: { phase: "Made" } }, {});
    assert.equal(created.status, undefined);
    const withStatus = await store.update(
      testContext(),
      { namespace: "ns", name: "s1", subresource: "status" },
      { ...created, status: { phase: "Ready" }, spec: { size: 99 } },
      {},
    );
    assert.deepEqual(withStatus.status, { phase: "Ready" });
    assert.deepEqual(withStatus.spec, { size: 1 }, "a status update must not change spec");
    const mainUpdate = await store.update(
      testContext(),
      { namespace: "ns", name: "s1" },
      { ...withStatus, status: { phase: "Hacked" }, spec: { size: 2 } },
      {},
    );
    assert.deepEqual(mainUpdate.status, { phase: "Ready" });
    assert.deepEqual(mainUpdate.spec, { size: 2 });
  });

  it("create() refuses a namespace different from the URL's", async () => {
    const error = await statusErrorOf(store.create(testContext(), "other", widget("mismatch"), {}));
    assert.equal(error.code, 400);
  });

  it("delete() with a grace period keeps the object until the time passes, and only shortens it", async () => {
    await store.create(testContext(), "ns", widget("graceful"), {});
    const first = await store.delete(testContext(), { namespace: "ns", name: "graceful" }, { gracePeriodSeconds: 300 });
    assert.equal(first.removed, false);
    assert.equal(first.object.metadata.deletionGracePeriodSeconds, 300);
    const longer = await store.delete(
      testContext(),
      { namespace: "ns", name: "graceful" },
      { gracePeriodSeconds: 900 },
    );
    assert.equal(longer.object.metadata.deletionTimestamp, first.object.metadata.deletionTimestamp);
    const shorter = await store.delete(testContext(), { namespace: "ns", name: "graceful" }, { gracePeriodSeconds: 0 });
    assert.equal(shorter.removed, true);
  });

  it("patch() retries internally when a concurrent writer wins", async () => {
    await store.create(testContext(), "ns", widget("contended"), {});
    const patches = Array.from({ length: 20 }, (_, i) =>
      store.patch(
        testContext(),
        { namespace: "ns", name: "contended" },
        "merge",
        { metadata: { labels: { [`k${i}`]: "v" } } },
        {},
      ),
    );
    await Promise.all(patches);
    const final = await store.get(testContext(), { namespace: "ns", name: "contended" });
    assert.equal(Object.keys(final.metadata.labels ?? {}).length, 20);
  });
});

describe("GenericStore server-side apply on /status", () => {
  it("keeps the ownership apply computed for the status write", async () => {
    const env = await openTestRegistry([widgets]);
    const store = env.store(widgets);
    try {
      await store.create(testContext(), "ns", widget("ssa-status"), {});
      const result = await store.patch(
        testContext(),
        { namespace: "ns", name: "ssa-status", subresource: "status" },
        "apply",
        {
          apiVersion: "test.platform.sh/v1",
          kind: "Widget",
          metadata: { name: "ssa-status" },
          status: { phase: "Up" },
        },
        { fieldManager: "status-writer" },
      );
      assert.deepEqual(result.object.status, { phase: "Up" });
      const entry = result.object.metadata.managedFields?.find((m) => m.manager === "status-writer");
      assert.equal(entry?.operation, "Apply");
      assert.equal(entry?.subresource, "status");
      assert.ok(entry?.fieldsV1["f:status"], "the applier owns status fields");
    } finally {
      await env.close();
    }
  });
});

describe("GenericStore concurrent updates", () => {
  it("update() with the same resourceVersion from many writers lets exactly one win", async () => {
    const env = await openTestRegistry([widgets]);
    const store = env.store(widgets);
    try {
      const created = await store.create(testContext(), "ns", widget("race"), {});
      const attempts = Array.from({ length: 10 }, (_, i) =>
        store.update(testContext(), { namespace: "ns", name: "race" }, { ...created, spec: { size: i + 10 } }, {}).then(
          () => "ok",
          (error: { code?: number }) => String(error.code),
        ),
      );
      const outcomes = await Promise.all(attempts);
      assert.equal(outcomes.filter((o) => o === "ok").length, 1);
      assert.equal(outcomes.filter((o) => o === "409").length, 9);
    } finally {
      await env.close();
    }
  });
});
