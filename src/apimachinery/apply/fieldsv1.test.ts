import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { FieldsV1, JsonMap } from "../types.ts";
import { type FieldPath, FieldSet, fieldSetFromObject, formatFieldPath, fromFieldsV1, toFieldsV1 } from "./fieldsv1.ts";
import { pathElement } from "./path-element.ts";
import { user, userSchema } from "./testing-fixtures.ts";

const paths = (...list: string[][]): FieldSet => FieldSet.fromPaths(list);

/** Path elements of every kind, including keys that must stay plain data. */
const element = fc.oneof(
  fc.constantFrom("spec", "a", "b", "__proto__", "constructor", "x.y", "").map(pathElement.field),
  fc
    .record(
      { name: fc.constantFrom("a", "b", "__proto__"), port: fc.integer({ min: 0, max: 3 }) },
      { requiredKeys: ["name"] },
    )
    .map((key) => pathElement.key(Object.entries(key))),
  fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean()).map(pathElement.value),
  fc.nat({ max: 5 }).map(pathElement.index),
);
const fieldPath = fc.array(element, { minLength: 1, maxLength: 4 });
const fieldSet = fc.array(fieldPath, { maxLength: 12 }).map((list) => FieldSet.fromPaths(list));

describe("FieldSet", () => {
  it("FieldSet.has() tells members from mere parents", () => {
    const set = paths(["f:spec", "f:email"], ["f:spec", "f:items", 'k:{"name":"a"}']);
    assert.equal(set.has(["f:spec", "f:email"]), true);
    assert.equal(set.has(["f:spec"]), false);
    assert.equal(set.has(["f:spec", "f:items", 'k:{"name":"a"}']), true);
    assert.equal(set.has(["f:status"]), false);
  });

  it("FieldSet.difference() keeps a parent when its child goes, and recursiveDifference() does not", () => {
    const set = paths(["f:spec"], ["f:spec", "f:a"], ["f:spec", "f:b"]);
    assert.deepEqual(set.difference(paths(["f:spec", "f:a"])).paths(), [["f:spec"], ["f:spec", "f:b"]]);
    assert.deepEqual(set.difference(paths(["f:spec"])).paths(), [
      ["f:spec", "f:a"],
      ["f:spec", "f:b"],
    ]);
    assert.equal(set.recursiveDifference(paths(["f:spec"])).isEmpty(), true);
  });

  it("FieldSet.paths() lists members before children, in upstream element order", () => {
    const set = paths(
      ["f:spec", "i:0"],
      ["f:spec", 'v:"x"'],
      ["f:spec", 'k:{"a":1}'],
      ["f:spec", "f:z", "f:y"],
      ["f:a"],
    );
    assert.deepEqual(set.paths(), [
      ["f:a"],
      ["f:spec", 'k:{"a":1}'],
      ["f:spec", 'v:"x"'],
      ["f:spec", "i:0"],
      ["f:spec", "f:z", "f:y"],
    ]);
  });

  it("FieldSet operations obey the set laws", () => {
    fc.assert(
      fc.property(fieldSet, fieldSet, (a, b) => {
        assert.ok(a.union(b).equals(b.union(a)));
        assert.ok(a.intersection(b).equals(b.intersection(a)));
        assert.ok(a.difference(b).union(a.intersection(b)).equals(a));
        assert.ok(a.difference(a).isEmpty());
        for (const path of a.union(b).paths()) assert.ok(a.has(path) || b.has(path));
        assert.equal(a.union(b).size, a.size + b.size - a.intersection(b).size);
      }),
    );
  });
});

describe("toFieldsV1() and fromFieldsV1()", () => {
  it("toFieldsV1() writes members as {} and marks nodes that are also parents with '.'", () => {
    const set = paths(
      ["f:metadata", "f:labels"],
      ["f:metadata", "f:labels", "f:app"],
      ["f:spec", "f:access", 'k:{"name":"a"}'],
      ["f:spec", "f:access", 'k:{"name":"a"}', "f:verbs"],
      ["f:spec", "f:email"],
    );
    assert.deepEqual(toFieldsV1(set), {
      "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
      "f:spec": { "f:access": { 'k:{"name":"a"}': { ".": {}, "f:verbs": {} } }, "f:email": {} },
    });
  });

  it("fromFieldsV1() reads what Kubernetes writes, skipping unknown element kinds", () => {
    const json: FieldsV1 = {
      "f:spec": { ".": {}, "f:email": {}, 'k:{"port":80,"name":"a"}': { ".": {}, "f:x": {} }, "z:future": {} },
    };
    const set = fromFieldsV1(json);
    assert.deepEqual(set.paths(), [
      ["f:spec"],
      ["f:spec", "f:email"],
      ["f:spec", 'k:{"name":"a","port":80}'],
      ["f:spec", 'k:{"name":"a","port":80}', "f:x"],
    ]);
  });

  it("fromFieldsV1() rejects a level that is not an object", () => {
    assert.throws(() => fromFieldsV1({ "f:spec": "x" } as unknown as FieldsV1), TypeError);
    assert.throws(() => fromFieldsV1({ "k:notjson": {} }), SyntaxError);
  });

  it("fromFieldsV1() keeps __proto__ and constructor as plain field names", () => {
    const json = JSON.parse('{"f:__proto__":{"f:constructor":{}},"f:x":{"k:{\\"__proto__\\":1}":{}}}') as FieldsV1;
    const set = fromFieldsV1(json);
    assert.deepEqual(set.paths(), [
      ["f:__proto__", "f:constructor"],
      ["f:x", 'k:{"__proto__":1}'],
    ]);
    const back = toFieldsV1(set);
    assert.equal(Object.getPrototypeOf(back), Object.prototype);
    assert.deepEqual(Object.keys(back), ["f:__proto__", "f:x"]);
    assert.equal(({} as JsonMap).constructor, Object);
    assert.equal(Object.hasOwn(Object.prototype, "f:constructor"), false);
  });

  it("toFieldsV1() and fromFieldsV1() round-trip any set, through JSON text too", () => {
    fc.assert(
      fc.property(fieldSet, (set) => {
        const json = toFieldsV1(set);
        assert.ok(fromFieldsV1(json).equals(set));
        const reparsed = JSON.parse(JSON.stringify(json)) as FieldsV1;
        assert.ok(fromFieldsV1(reparsed).equals(set));
        assert.deepEqual(toFieldsV1(fromFieldsV1(reparsed)), json);
      }),
    );
  });
});

describe("formatFieldPath()", () => {
  it("formatFieldPath() prints paths as Kubernetes conflict messages do", () => {
    assert.equal(formatFieldPath(["f:spec", "f:email"]), ".spec.email");
    assert.equal(formatFieldPath(["f:metadata", "f:labels", "f:app"]), ".metadata.labels.app");
    assert.equal(formatFieldPath(["f:spec", "f:items", 'k:{"name":"a"}']), '.spec.items[name="a"]');
    assert.equal(formatFieldPath(["f:metadata", "f:finalizers", 'v:"x"']), '.metadata.finalizers[="x"]');
    assert.equal(
      formatFieldPath(["f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}', "f:name"]),
      '.spec.ports[port=80,protocol="TCP"].name',
    );
    assert.equal(formatFieldPath(["f:spec", "f:list", "i:2"]), ".spec.list[2]");
    assert.equal(formatFieldPath(["f:spec", "f:set", "v:true"]), ".spec.set[=true]");
    assert.equal(formatFieldPath(["f:spec", "f:set", 'v:"a\\"b\\n"']), '.spec.set[="a\\"b\\n"]');
  });

  it("fromFieldsV1() refuses a key whose JSON nests past the bound (clients send FieldsV1)", () => {
    const value = (levels: number) => `v:${"[".repeat(levels)}1${"]".repeat(levels)}`;
    assert.equal(fromFieldsV1({ "f:list": { [value(100)]: {} } }).paths().length, 1);
    assert.throws(() => fromFieldsV1({ "f:list": { [value(101)]: {} } }), TypeError);
    assert.throws(
      () => fromFieldsV1({ "f:list": { [`k:${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`]: {} } }),
      /nests deeper than 100 levels/,
    );
  });
});

describe("fieldSetFromObject()", () => {
  const fieldsOf = (object: unknown, resetFields?: "status" | "spec" | "none") =>
    toFieldsV1(fieldSetFromObject(object, userSchema, { resetFields }));

  it("fieldSetFromObject() tracks leaves, list items per list type and map keys, never identity metadata", () => {
    const object = user(
      {
        email: "a@example.com",
        tags: ["x", "y"],
        groups: ["admins"],
        access: [{ name: "read", verbs: ["get"] }],
        settings: { theme: "dark" },
        extra: { nested: { deep: 1 }, list: [1, 2] },
        profile: {},
        limits: { cpu: "1" },
      },
      {
        namespace: "ns",
        uid: "u",
        resourceVersion: "7",
        generation: 2,
        creationTimestamp: "2025-01-01T00:00:00Z",
        labels: { app: "web" },
        finalizers: ["keep"],
        ownerReferences: [{ apiVersion: "v1", kind: "X", name: "o", uid: "ou" }],
        managedFields: [],
      },
    );
    assert.deepEqual(fieldsOf(object), {
      "f:metadata": {
        "f:finalizers": { 'v:"keep"': {} },
        "f:labels": { "f:app": {} },
        "f:ownerReferences": {
          'k:{"uid":"ou"}': { ".": {}, "f:apiVersion": {}, "f:kind": {}, "f:name": {}, "f:uid": {} },
        },
      },
      "f:spec": {
        "f:access": { 'k:{"name":"read"}': { ".": {}, "f:name": {}, "f:verbs": {} } },
        "f:email": {},
        "f:extra": { "f:list": {}, "f:nested": { ".": {}, "f:deep": {} } },
        "f:groups": { 'v:"admins"': {} },
        "f:limits": {},
        "f:profile": {},
        "f:settings": { "f:theme": {} },
        "f:tags": {},
      },
    });
  });

  it("fieldSetFromObject() leaves out status for the main resource and spec for /status", () => {
    const object = user({ email: "a" }, { labels: { a: "b" } }, { status: { phase: "Ready" } });
    assert.deepEqual(Object.keys(fieldsOf(object, "status")), ["f:metadata", "f:spec"]);
    assert.deepEqual(Object.keys(fieldsOf(object, "spec")), ["f:metadata", "f:status"]);
    assert.deepEqual(Object.keys(fieldsOf(object, "none")), ["f:metadata", "f:spec", "f:status"]);
  });

  it("fieldSetFromObject() owns duplicated list items as a whole", () => {
    const object = user({ access: [{ name: "a", verbs: ["x"] }, { name: "a" }, { name: "b" }] });
    assert.deepEqual(fieldsOf(object), {
      "f:spec": { "f:access": { 'k:{"name":"a"}': {}, 'k:{"name":"b"}': { ".": {}, "f:name": {} } } },
    });
  });

  it("fieldSetFromObject() of an object equals the union of its parts", () => {
    const spec = fc.record(
      {
        email: fc.string({ maxLength: 3 }),
        tags: fc.array(fc.string({ maxLength: 2 }), { maxLength: 3 }),
        groups: fc.uniqueArray(fc.constantFrom("a", "b", "c", "__proto__"), { maxLength: 3 }),
        access: fc.uniqueArray(
          fc.record(
            { name: fc.constantFrom("r", "w", "x"), verbs: fc.array(fc.constantFrom("get", "put")) },
            { requiredKeys: ["name"] },
          ),
          { selector: (item) => item.name, maxLength: 3 },
        ),
        settings: fc.dictionary(fc.constantFrom("a", "b", "constructor"), fc.string({ maxLength: 2 }), { maxKeys: 3 }),
        extra: fc.dictionary(fc.constantFrom("p", "q"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    );
    // Splits every granular part of the spec (fields, set and map list items, map keys) between two objects.
    const split = fc.tuple(spec, fc.infiniteStream(fc.boolean())).map(([whole, coins]) => {
      const sides: [JsonMap, JsonMap] = [{}, {}];
      const pick = () => (coins.next().value ? 0 : 1);
      for (const [key, value] of Object.entries(JSON.parse(JSON.stringify(whole)) as JsonMap)) {
        if (key === "groups" || key === "access") {
          for (const item of value as unknown[]) {
            const side = sides[pick()];
            side[key] = [...((side[key] as unknown[] | undefined) ?? []), item];
          }
        } else if (key === "settings" || key === "extra") {
          for (const [k, v] of Object.entries(value as JsonMap)) {
            const side = sides[pick()];
            side[key] = { ...((side[key] as JsonMap | undefined) ?? {}), [k]: v };
          }
        } else sides[pick()][key] = value;
      }
      return { whole: JSON.parse(JSON.stringify(whole)) as JsonMap, parts: sides };
    });
    fc.assert(
      fc.property(split, ({ whole, parts }) => {
        // Empty containers are leaves of their own; keep only non-empty ones so the parts add up exactly.
        // An empty spec is a leaf too, so a part without spec fields has no spec at all.
        const object = (spec: JsonMap) => {
          const kept = Object.entries(spec).filter(
            ([, v]) => !(typeof v === "object" && v !== null && Object.keys(v).length === 0),
          );
          return kept.length > 0 ? user(Object.fromEntries(kept)) : { ...user({}), spec: undefined };
        };
        const all = fieldSetFromObject(object(whole), userSchema);
        const union = fieldSetFromObject(object(parts[0]), userSchema).union(
          fieldSetFromObject(object(parts[1]), userSchema),
        );
        assert.deepEqual(toFieldsV1(union), toFieldsV1(all));
      }),
    );
  });

  it("fieldSetFromObject() does not modify its input", () => {
    const object = user({ access: [{ name: "a" }], settings: { x: "1" } }, { labels: { a: "b" } });
    const before = structuredClone(object);
    fieldSetFromObject(object, userSchema);
    assert.deepEqual(object, before);
  });
});

export type { FieldPath };
