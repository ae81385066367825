// Encoded reads (getEncoded, listEncoded, createEncoded): the same answers as the object reads, never stale, and
// presentForRead respected per caller unless the resource declares it caller-independent.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeObject } from "../apimachinery/types.ts";
import type { GenericStore } from "./store.ts";
import { openTestRegistry, type TestRegistry, testContext } from "./testing.ts";
import type { RequestContext, ResourceDefinition } from "./types.ts";

const base = {
  group: "test.platform.sh",
  version: "v1",
  namespaced: false,
  description: "A test kind.",
  schema: { spec: { type: "object", properties: { size: { type: "integer" }, secret: { type: "string" } } } },
};

const plain: ResourceDefinition = { ...base, kind: "Plain", plural: "plains", singular: "plain", strategy: {} };

/** Shows `spec.secret` only to the user "owner": the presentation depends on the caller. */
const perCaller: ResourceDefinition = {
  ...base,
  kind: "Secretive",
  plural: "secretives",
  singular: "secretive",
  strategy: {
    presentForRead(object, context) {
      if (context.user.name === "owner") return object;
      const copy = structuredClone(object);
      delete (copy.spec as { secret?: string }).secret;
      return copy;
    },
  },
};

/** Blanks `spec.secret` for everyone, and says so: reads may share one encoding. */
let uniformCalls = 0;
const uniform: ResourceDefinition = {
  ...base,
  kind: "Uniform",
  plural: "uniforms",
  singular: "uniform",
  strategy: {
    presentForReadIgnoresCaller: true,
    presentForRead(object) {
      uniformCalls++;
      const copy = structuredClone(object);
      if (copy.spec) (copy.spec as { secret?: string }).secret = "";
      return copy;
    },
  },
};

const object = (definition: ResourceDefinition, name: string, size = 1, extra: Record<string, string> = {}) =>
  ({
    apiVersion: "test.platform.sh/v1",
    kind: definition.kind,
    metadata: { name, labels: extra },
    spec: { size, secret: "s3cret" },
  }) as KubeObject;

const as = (name: string): RequestContext => testContext({ user: { name, groups: [] } });
const parsed = async (value: Promise<{ json: string }>) => JSON.parse((await value).json);

describe("GenericStore encoded reads", () => {
  let env: TestRegistry;
  let plains: GenericStore;
  let secretives: GenericStore;
  let uniforms: GenericStore;
  before(async () => {
    env = await openTestRegistry([plain, perCaller, uniform]);
    plains = env.store(plain);
    secretives = env.store(perCaller);
    uniforms = env.store(uniform);
  });
  after(() => env.close());

  it("getEncoded() answers the same object as get()", async () => {
    const created = await plains.create(testContext(), undefined, object(plain, "same"), {});
    const encoded = await parsed(plains.getEncoded(testContext(), { name: "same" }));
    assert.deepEqual(encoded, await plains.get(testContext(), { name: "same" }));
    assert.deepEqual(encoded, created);
  });

  it("getEncoded() after an update never returns the old bytes", async () => {
    await plains.create(testContext(), undefined, object(plain, "moving"), {});
    for (let size = 2; size <= 5; size++) {
      const current = await plains.get(testContext(), { name: "moving" });
      const updated = await plains.update(
        testContext(),
        { name: "moving" },
        { ...current, spec: { size, secret: "s3cret" } },
        {},
      );
      const read = await parsed(plains.getEncoded(testContext(), { name: "moving" }));
      assert.equal(read.spec.size, size);
      assert.equal(read.metadata.resourceVersion, updated.metadata.resourceVersion);
      assert.deepEqual(read, updated);
    }
  });

  it("getEncoded() of a large object hands every read of one version the same text, and a new version a new one", async () => {
    const big = { ...object(plain, "big"), metadata: { name: "big", annotations: { a: "x".repeat(100_000) } } };
    await plains.create(testContext(), undefined, big as KubeObject, {});
    const first = await plains.getEncoded(testContext(), { name: "big" });
    const second = await plains.getEncoded(testContext(), { name: "big" });
    assert.equal(first.json, second.json);
    assert.deepEqual(JSON.parse(first.json), await plains.get(testContext(), { name: "big" }));
    const current = await plains.get(testContext(), { name: "big" });
    const updated = await plains.update(testContext(), { name: "big" }, { ...current, spec: { size: 9 } }, {});
    const after = JSON.parse((await plains.getEncoded(testContext(), { name: "big" })).json);
    assert.deepEqual(after, updated, "never the old version's text");
  });

  it("getEncoded() of a value stored in another key order is still the decoded object", async () => {
    const key = plains.key({ name: "reordered" });
    const value = { spec: { size: 7 }, metadata: { name: "reordered", uid: "u-1" }, kind: "Plain", apiVersion: "x" };
    const record = await plains.storage.create(key, JSON.stringify(value));
    const read = await parsed(plains.getEncoded(testContext(), { name: "reordered" }));
    assert.deepEqual(read, { ...value, metadata: { ...value.metadata, resourceVersion: String(record.revision) } });
  });

  it("getEncoded() of an object with empty metadata stays valid JSON", () => {
    const json = plains.encoder.encode(
      {
        key: "/x",
        value: '{"apiVersion":"test.platform.sh/v1","kind":"Plain","metadata":{}}',
        revision: 9,
        createRevision: 9,
      },
      testContext(),
    );
    assert.deepEqual(JSON.parse(json), {
      apiVersion: "test.platform.sh/v1",
      kind: "Plain",
      metadata: { resourceVersion: "9" },
    });
  });

  it("getEncoded() and listEncoded() present the object for each caller when presentForRead depends on it", async () => {
    await secretives.create(as("owner"), undefined, object(perCaller, "mine"), {});
    for (let round = 0; round < 2; round++) {
      const owner = await parsed(secretives.getEncoded(as("owner"), { name: "mine" }));
      const other = await parsed(secretives.getEncoded(as("other"), { name: "mine" }));
      assert.equal(owner.spec.secret, "s3cret");
      assert.equal(other.spec.secret, undefined);
      const listed = await parsed(secretives.listEncoded(as("other"), {}));
      assert.equal(listed.items[0].spec.secret, undefined);
      assert.equal((await parsed(secretives.listEncoded(as("owner"), {}))).items[0].spec.secret, "s3cret");
    }
    const created = await parsed(secretives.createEncoded(as("other"), undefined, object(perCaller, "theirs"), {}));
    assert.equal(created.spec.secret, undefined);
  });

  it("a caller-independent presentForRead runs once per stored version, and an update is seen at once", async () => {
    const created = await uniforms.create(testContext(), undefined, object(uniform, "u"), {});
    assert.equal((created.spec as { secret?: string }).secret, "");
    uniformCalls = 0;
    const first = await parsed(uniforms.getEncoded(as("a"), { name: "u" }));
    const second = await parsed(uniforms.getEncoded(as("b"), { name: "u" }));
    assert.deepEqual(first, second);
    assert.equal(first.spec.secret, "");
    assert.equal(uniformCalls, 1, "the second read is served from the cache");
    const current = await uniforms.get(testContext(), { name: "u" });
    await uniforms.update(testContext(), { name: "u" }, { ...current, spec: { size: 3, secret: "new" } }, {});
    const after = await parsed(uniforms.getEncoded(as("a"), { name: "u" }));
    assert.equal(after.spec.size, 3);
    assert.notEqual(after.metadata.resourceVersion, first.metadata.resourceVersion);
  });

  it("listEncoded() answers the same list as list(), with selectors and continue tokens", async () => {
    for (let i = 0; i < 5; i++) {
      await plains.create(testContext(), undefined, object(plain, `l-${i}`, i, { parity: i % 2 ? "odd" : "even" }), {});
    }
    const cases = [
      {},
      { limit: 2 },
      { labelSelector: "parity=odd" },
      { labelSelector: "parity=even", limit: 1 },
      { fieldSelector: "metadata.name=l-3" },
    ];
    for (const options of cases) {
      let token: string | undefined;
      do {
        const page = { ...options, continue: token };
        const expected = await plains.list(testContext(), page);
        const actual = await parsed(plains.listEncoded(testContext(), page));
        assert.deepEqual(actual, expected, JSON.stringify(page));
        token = expected.metadata.continue;
      } while (token);
    }
  });

  it("createEncoded() answers what was stored, and a dry run what would have been", async () => {
    const created = await parsed(plains.createEncoded(testContext(), undefined, object(plain, "enc"), {}));
    assert.deepEqual(created, await plains.get(testContext(), { name: "enc" }));
    const dry = await parsed(plains.createEncoded(testContext(), undefined, object(plain, "dry"), { dryRun: true }));
    assert.equal(dry.metadata.name, "dry");
    assert.equal(dry.metadata.resourceVersion, undefined);
  });
});
