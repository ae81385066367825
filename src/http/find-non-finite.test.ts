import assert from "node:assert/strict";
import { test } from "node:test";
import { findNonFinite } from "./find-non-finite.ts";

const found = (text: string) => findNonFinite(text, JSON.parse(text));

test("findNonFinite() names the first number JSON cannot hold, with its path", () => {
  assert.deepEqual(found('{"spec":{"ttl":1e400}}'), { path: "spec.ttl", value: Number.POSITIVE_INFINITY });
  assert.deepEqual(found('{"items":[1,{"n":-1E+999}]}'), { path: "items[1].n", value: Number.NEGATIVE_INFINITY });
  assert.equal(found(`{"n":${"9".repeat(400)}}`)?.path, "n");
});

test("findNonFinite() leaves finite numbers, tiny ones and look-alike strings alone", () => {
  assert.equal(found('{"a":1e300,"b":1e-400,"c":"1e400","d":[0.5,-3]}'), undefined);
  assert.equal(findNonFinite("{}", { a: Number.NaN }), undefined, "text without a suspicious number is not walked");
  assert.equal(findNonFinite("x: .nan", { x: Number.NaN })?.path, "x");
});

test("findNonFinite() walks deep nesting without recursion", () => {
  let value: unknown = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 100_000; i++) value = [value];
  const found = findNonFinite("1e999", value);
  assert.equal(found?.value, Number.POSITIVE_INFINITY);
  assert.equal(found?.path.length, "[0]".length * 100_000);
});

test("findNonFinite() scans long runs of digits in linear time", () => {
  // 3 MiB of 308-digit runs: a backtracking pattern would retry inside every run.
  const text = `"${`${"9".repeat(308)} `.repeat(10_000)}"`;
  assert.equal(findNonFinite(text, JSON.parse(text)), undefined);
});
