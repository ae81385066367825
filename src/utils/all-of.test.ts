import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { allOf } from "./all-of.ts";

test("allOf() is true when every predicate is, and for none at all", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 5 }),
      fc.integer({ min: 0, max: 7 }),
      (bounds, n) => {
        const predicates = bounds.map((bound) => (value: number) => value >= bound);
        assert.equal(
          allOf(predicates)(n),
          predicates.every((p) => p(n)),
        );
      },
    ),
  );
});

test("allOf() does not see later changes to the array it was given", () => {
  const predicates = [(n: number) => n > 0, (n: number) => n > 1, (n: number) => n > 2];
  const all = allOf(predicates);
  predicates.push(() => false);
  assert.equal(all(3), true);
});
