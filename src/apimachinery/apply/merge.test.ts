import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { JsonMap } from "../types.ts";
import { compareObjects } from "./compare.ts";
import { toFieldsV1 } from "./fieldsv1.ts";
import { mergeValue } from "./merge.ts";
import { userSchema } from "./testing-fixtures.ts";

const spec = (value: JsonMap): JsonMap => ({ spec: value });
const specValue = fc.record(
  {
    email: fc.string({ maxLength: 2 }),
    tags: fc.array(fc.constantFrom("x", "y"), { maxLength: 2 }),
    groups: fc.uniqueArray(fc.constantFrom("a", "b", "c"), { maxLength: 3 }),
    access: fc.uniqueArray(
      fc.record({ name: fc.constantFrom("r", "w"), scope: fc.constantFrom("all", "own") }, { requiredKeys: ["name"] }),
      { selector: (item) => item.name, maxLength: 2 },
    ),
    settings: fc.dictionary(fc.constantFrom("a", "__proto__"), fc.string({ maxLength: 2 }), { maxKeys: 2 }),
    extra: fc.dictionary(fc.constantFrom("p", "q"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
  },
  { requiredKeys: [] },
);
const object = specValue.map((value) => JSON.parse(JSON.stringify(spec(value))) as JsonMap);

describe("mergeValue()", () => {
  it("mergeValue() interleaves set items as upstream: config order, live-only items kept in place", () => {
    const merged = mergeValue(
      spec({ groups: ["a", "b", "c", "d"] }),
      spec({ groups: ["a", "aprime", "c", "cprime"] }),
      userSchema,
    );
    assert.deepEqual(merged, spec({ groups: ["a", "b", "aprime", "c", "d", "cprime"] }));
  });

  it("mergeValue() merges map list items field by field and replaces atomic lists", () => {
    const live = spec({ access: [{ name: "r", scope: "all", verbs: ["get"] }], tags: ["x", "y"] });
    const config = spec({ access: [{ name: "r", verbs: ["list"] }], tags: ["z"] });
    assert.deepEqual(
      mergeValue(live, config, userSchema),
      spec({ access: [{ name: "r", scope: "all", verbs: ["list"] }], tags: ["z"] }),
    );
  });

  it("mergeValue() keeps a map's contents when the config's value is null", () => {
    assert.deepEqual(
      mergeValue(spec({ profile: { city: "x" } }), spec({ profile: null }), userSchema),
      spec({ profile: { city: "x" } }),
    );
  });

  it("mergeValue() of an object with itself is that object, and with {} too", () => {
    fc.assert(
      fc.property(object, (value) => {
        assert.deepEqual(mergeValue(value, value, userSchema), value);
        assert.deepEqual(mergeValue(value, {}, userSchema), value);
      }),
    );
  });
});

describe("compareObjects()", () => {
  it("compareObjects() reports added containers with their fields, and changed leaves", () => {
    const comparison = compareObjects(
      spec({ email: "a", tags: ["x"] }),
      spec({ email: "b", tags: ["x"], settings: { k: "v" } }),
      userSchema,
    );
    assert.deepEqual(toFieldsV1(comparison.added), { "f:spec": { "f:settings": { ".": {}, "f:k": {} } } });
    assert.deepEqual(toFieldsV1(comparison.modified), { "f:spec": { "f:email": {} } });
    assert.equal(comparison.removed.isEmpty(), true);
  });

  it("compareObjects() finds no difference between an object and itself, and mirrors when swapped", () => {
    fc.assert(
      fc.property(object, object, (a, b) => {
        const same = compareObjects(a, a, userSchema);
        assert.ok(same.added.isEmpty() && same.removed.isEmpty() && same.modified.isEmpty());
        const forward = compareObjects(a, b, userSchema);
        const backward = compareObjects(b, a, userSchema);
        assert.ok(forward.added.equals(backward.removed));
        assert.ok(forward.modified.equals(backward.modified));
      }),
    );
  });
});
