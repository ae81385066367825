import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { cloneJson, getOwn, jsonEqual, jsonTypeName, setOwn } from "./json-values.ts";

describe("json values", () => {
  it("getOwn() ignores inherited properties", () => {
    assert.equal(getOwn({}, "constructor"), undefined);
    assert.equal(getOwn({ constructor: 1 }, "constructor"), 1);
  });

  it("setOwn() stores __proto__ as an own property without changing the prototype", () => {
    const object: Record<string, unknown> = {};
    setOwn(object, "__proto__", { polluted: true });
    assert.equal(Object.getPrototypeOf(object), Object.prototype);
    assert.deepEqual(Object.keys(object), ["__proto__"]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("cloneJson() copies deeply, __proto__ keys included", () => {
    const original = JSON.parse('{"__proto__": {"a": [1]}, "b": {"c": 2}}');
    const copy = cloneJson(original);
    assert.deepEqual(copy, original);
    copy.b.c = 3;
    assert.equal(original.b.c, 2);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  });

  it("jsonEqual() ignores key order and agrees with a JSON round trip", () => {
    assert.equal(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }), true);
    assert.equal(jsonEqual({ a: 1 }, { a: 1, b: undefined }), false);
    assert.equal(jsonEqual([1], { 0: 1 }), false);
    fc.assert(
      fc.property(fc.json(), (text) => {
        assert.equal(jsonEqual(JSON.parse(text), JSON.parse(text)), true);
      }),
    );
  });

  it("jsonTypeName() names JSON types as Kubernetes does", () => {
    assert.deepEqual([1, 1.5, "s", true, null, [], {}].map(jsonTypeName), [
      "integer",
      "number",
      "string",
      "boolean",
      "null",
      "array",
      "object",
    ]);
  });
});
