// The create-time managedFields memo must give exactly what the field manager computes, for any pair of objects:
// reused for objects of one shape (whatever their leaf values), recomputed for any other shape.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { updateManagedFields } from "../apimachinery/apply/managed-fields.ts";
import { API_VERSION, userSchema } from "../apimachinery/apply/testing-fixtures.ts";
import type { JsonMap, KubeObject, ManagedFieldsEntry } from "../apimachinery/types.ts";
import { CREATES_WITHOUT_MEMO, CreateManagedFieldsMemo, MAX_ENTRY_CHARS, shapeOf } from "./store-managed-fields.ts";

const direct = (object: KubeObject, manager: string, time: string, subresource?: string): ManagedFieldsEntry[] =>
  updateManagedFields({
    schema: userSchema,
    old: undefined,
    object,
    manager,
    apiVersion: API_VERSION,
    time,
    subresource,
  });

const word = fc.stringMatching(/^[a-z]{1,4}$/);
const dict = fc.dictionary(word, fc.string({ maxLength: 3 }), { maxKeys: 3 });
const json = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<unknown>;

/** Objects of the fixture schema: every kind of list (atomic, set, map) and map, optional everywhere. */
const spec = fc.record(
  {
    email: fc.string({ maxLength: 5 }),
    disabled: fc.boolean(),
    tags: fc.array(word, { maxLength: 3 }),
    groups: fc.uniqueArray(word, { maxLength: 3 }),
    access: fc.uniqueArray(
      fc.record(
        { name: word, verbs: fc.array(word, { maxLength: 2 }), scope: fc.string({ maxLength: 3 }) },
        { requiredKeys: ["name"] },
      ),
      { selector: (item) => item.name, maxLength: 3 },
    ),
    settings: dict,
    extra: fc.dictionary(word, json, { maxKeys: 2 }),
    profile: fc.record({ city: fc.string({ maxLength: 3 }), zip: fc.string({ maxLength: 3 }) }, { requiredKeys: [] }),
    limits: fc.record({ cpu: fc.string({ maxLength: 3 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const userObject = fc.record({ spec, labels: dict, annotations: dict, name: word }).map(
  ({ spec, labels, annotations, name }): KubeObject => ({
    apiVersion: API_VERSION,
    kind: "User",
    metadata: { name, labels, annotations, uid: "u", generation: 1 },
    spec: spec as JsonMap,
  }),
);

/** The same object with every leaf outside lists replaced by another value of its type. */
function twin(value: unknown, salt: string): unknown {
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, twin(v, salt)]));
  }
  if (typeof value === "string") return `${value}${salt}`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  return value;
}

test("CreateManagedFieldsMemo.forCreate() equals the field manager for any two creates in a row", () => {
  fc.assert(
    fc.property(
      userObject,
      userObject,
      fc.boolean(),
      fc.constantFrom("kubectl", "other"),
      (first, other, same, manager) => {
        const memo = new CreateManagedFieldsMemo();
        const second = same ? (twin(first, "x") as KubeObject) : other;
        memo.forCreate(first, manager, undefined, "2026-01-01T00:00:00Z", () =>
          direct(first, manager, "2026-01-01T00:00:00Z"),
        );
        const time = "2026-01-01T00:00:09Z";
        const reused = memo.forCreate(second, manager, undefined, time, () => direct(second, manager, time));
        assert.deepEqual(reused, direct(second, manager, time));
      },
    ),
    { numRuns: 300 },
  );
});

test("CreateManagedFieldsMemo.forCreate() reuses the entry for the same shape and hands out separate copies", () => {
  const memo = new CreateManagedFieldsMemo();
  const a: KubeObject = { apiVersion: API_VERSION, kind: "User", metadata: { name: "a" }, spec: { email: "a@x" } };
  const b: KubeObject = { apiVersion: API_VERSION, kind: "User", metadata: { name: "b" }, spec: { email: "b@y" } };
  let computed = 0;
  const run = (object: KubeObject, time: string) =>
    memo.forCreate(object, "m", undefined, time, () => {
      computed++;
      return direct(object, "m", time);
    });
  const first = run(a, "2026-01-01T00:00:00Z");
  const second = run(b, "2026-01-01T00:00:05Z");
  assert.equal(computed, 1);
  assert.equal(second[0].time, "2026-01-01T00:00:05Z");
  assert.notEqual(first[0].fieldsV1, second[0].fieldsV1, "no two objects share one fieldsV1");
  run({ ...b, spec: { displayName: "B" } }, "2026-01-01T00:00:06Z");
  assert.equal(computed, 2, "another shape is computed");
});

/** A memo and a create of a User whose list names an item of its own (as Endpoints' addresses do), counting computes. */
function countingMemo() {
  const memo = new CreateManagedFieldsMemo();
  const counter = { computed: 0 };
  const create = (name: string) => {
    const object: KubeObject = { apiVersion: API_VERSION, kind: "User", metadata: { name }, spec: { tags: [name] } };
    return memo.forCreate(object, "m", undefined, "2026-01-01T00:00:00Z", () => {
      counter.computed++;
      return direct(object, "m", "2026-01-01T00:00:00Z");
    });
  };
  return { create, counter };
}

test("CreateManagedFieldsMemo.forCreate() stops keeping shapes after a full memo found no repeat, then tries again", () => {
  const { create, counter } = countingMemo();
  // The first 257 shapes fill the memo without a repeat.
  for (let i = 0; i <= 256; i++) create(`u${i}`);
  assert.equal(counter.computed, 257);
  create("again");
  create("again");
  assert.equal(counter.computed, 259, "a repeated shape is computed again while the memo is off");
  for (let i = 2; i < CREATES_WITHOUT_MEMO; i++) create(`v${i}`);
  assert.equal(counter.computed, 257 + CREATES_WITHOUT_MEMO);
  const again = create("back");
  assert.deepEqual(create("back"), again);
  assert.equal(counter.computed, 258 + CREATES_WITHOUT_MEMO, "after them the memo is used again");
});

test("CreateManagedFieldsMemo.forCreate() keeps no shape larger than MAX_ENTRY_CHARS, however often it comes", () => {
  const memo = new CreateManagedFieldsMemo();
  let computed = 0;
  const create = (tags: string[]) => {
    const object: KubeObject = { apiVersion: API_VERSION, kind: "User", metadata: { name: "u" }, spec: { tags } };
    return memo.forCreate(object, "m", undefined, "2026-01-01T00:00:00Z", () => {
      computed++;
      return direct(object, "m", "2026-01-01T00:00:00Z");
    });
  };
  // A list longer than an entry may be: a body of 3 MiB would otherwise be kept whole.
  const large = Array.from({ length: MAX_ENTRY_CHARS / 4 }, (_, i) => `t${i}`);
  const first = create(large);
  assert.deepEqual(create(large), first, "the same managedFields, computed again");
  assert.equal(computed, 2, "a large shape is not kept");
  create(["small"]);
  create(["small"]);
  assert.equal(computed, 3, "a small one is");
});

test("CreateManagedFieldsMemo.forCreate() keeps memoizing while shapes repeat", () => {
  const { create, counter } = countingMemo();
  create("same");
  create("same");
  for (let i = 0; i < 300; i++) create(`u${i}`);
  create("again");
  create("again");
  assert.equal(counter.computed, 1 + 300 + 1, "one repeat before the memo filled keeps it on");
});

test("shapeOf() keeps map keys and whole lists, and ignores leaf values and managedFields", () => {
  const base = { metadata: { name: "a", managedFields: [{ manager: "x" }] }, spec: { list: [{ k: "1" }], s: "v" } };
  const same = { metadata: { name: "b" }, spec: { list: [{ k: "1" }], s: "w" } };
  assert.equal(shapeOf(base, true), shapeOf(same, true));
  assert.notEqual(shapeOf(base, true), shapeOf({ ...same, spec: { list: [{ k: "2" }], s: "w" } }, true));
  assert.notEqual(shapeOf(base, true), shapeOf({ ...same, spec: { list: [{ k: "1" }], t: "w" } }, true));
  assert.notEqual(shapeOf({ a: null }), shapeOf({ a: "x" }));
});
