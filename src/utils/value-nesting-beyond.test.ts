import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { valueNestingBeyond } from "./value-nesting-beyond.ts";

function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

test("valueNestingBeyond() agrees with a recursive depth on random JSON values", () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 14 }), (value, limit) => {
      assert.equal(valueNestingBeyond(value, limit), depthOf(value) > limit);
    }),
    { numRuns: 1000 },
  );
});

test("valueNestingBeyond() measures values deeper than the stack and stops at a cycle", () => {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { a: [deep] };
  assert.equal(valueNestingBeyond(deep, 199_999), true);
  assert.equal(valueNestingBeyond(deep, 200_000), false);
  const cyclic: unknown[] = [];
  cyclic.push(cyclic);
  assert.equal(valueNestingBeyond(cyclic, 100), true);
});
