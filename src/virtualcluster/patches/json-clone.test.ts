import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { cloneJson } from "./json-clone.ts";

test("cloneJson() equals a JSON round trip for any JSON-like value", () => {
  fc.assert(
    fc.property(
      fc.anything({
        withBoxedValues: false,
        withMap: false,
        withSet: false,
        withObjectString: false,
        withSparseArray: true,
        withNullPrototype: true,
      }),
      (value) => {
        let expected: unknown;
        try {
          expected = JSON.parse(JSON.stringify(value) ?? "null");
        } catch {
          return; // BigInt and friends: not JSON either way
        }
        const copied = cloneJson(value);
        assert.deepEqual(copied === undefined ? null : copied, expected);
      },
    ),
  );
});

test("cloneJson() copies deeply and keeps __proto__ as data", () => {
  const source = JSON.parse('{"a": {"__proto__": {"x": 1}}, "b": [1, {"c": 2}]}');
  const copied = cloneJson(source) as typeof source;
  assert.notEqual(copied.a, source.a);
  assert.notEqual(copied.b[1], source.b[1]);
  assert.equal(Object.getPrototypeOf(copied.a), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(copied.a, "__proto__")?.value, { x: 1 });
});

test("cloneJson() rejects cycles", () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(() => cloneJson(cyclic), /cyclic or nested more than 1000 levels/);
  const shared = { x: 1 };
  assert.deepEqual(cloneJson({ a: shared, b: shared }), { a: { x: 1 }, b: { x: 1 } });
});

test("cloneJson() turns -0 into 0 as JSON does", () => {
  assert.ok(Object.is((cloneJson({ a: -0 }) as { a: number }).a, 0));
});
