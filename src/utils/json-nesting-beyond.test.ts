import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { jsonNestingBeyond } from "./json-nesting-beyond.ts";

/** The reference: nesting of the parsed value, recursively (test inputs are shallow enough). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

/** Strings full of what could fool a scanner: quotes, backslashes and brackets. */
const trickyString = fc.stringMatching(/^[\\"[\]{}a\u00e9\u{1f600}]{0,8}$/u);
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "medium", withCrossShrink: true },
    fc.constantFrom(null, true, 0, -1.5e10),
    trickyString,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(trickyString, tie("value"), { maxKeys: 3 }),
  ),
})).value;
const spacing = fc.constantFrom(undefined, 1, 2, "\t");

test("jsonNestingBeyond() agrees with JSON.parse and a recursive depth on random JSON text", () => {
  fc.assert(
    fc.property(jsonValue, spacing, fc.integer({ min: 0, max: 8 }), (value, space, limit) => {
      const text = JSON.stringify(value, null, space);
      const depth = depthOf(JSON.parse(text));
      const at = jsonNestingBeyond(text, limit);
      assert.equal(at !== -1, depth > limit, `${text} has depth ${depth}, limit ${limit}`);
      if (at !== -1) assert.ok(text[at] === "[" || text[at] === "{", "points at an opening bracket");
    }),
    { numRuns: 2000 },
  );
});

test("jsonNestingBeyond() counts both sides of the limit and ignores brackets inside strings", () => {
  const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
  assert.equal(jsonNestingBeyond(nested(100), 100), -1);
  assert.equal(jsonNestingBeyond(nested(101), 100), 100);
  assert.equal(jsonNestingBeyond(`{"a":${'{"b":'.repeat(99)}1${"}".repeat(99)}}`, 100), -1);
  assert.equal(jsonNestingBeyond(`["${"[".repeat(500)}"]`, 100), -1);
  assert.equal(jsonNestingBeyond(`["\\"${"[".repeat(500)}"]`, 100), -1, "an escaped quote does not end the string");
  assert.equal(jsonNestingBeyond(`["\\\\",${"[".repeat(200)}`, 100), 105, "an escaped backslash does");
  assert.equal(jsonNestingBeyond(`${"[".repeat(50_000)}${"]".repeat(50_000)}`, 100), 100);
  assert.equal(jsonNestingBeyond('"an unterminated string [[[[', 2), -1);
});
