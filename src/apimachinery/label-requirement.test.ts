import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { compileRequirement, newRequirement, type Operator, type Requirement } from "./label-requirement.ts";

/** The interpretation compileRequirement replaced (matched per object, values and bound read every time). */
function interpreted(r: Requirement, labels: Record<string, string> | undefined): boolean {
  const int64 = (value: string) => {
    if (!/^[+-]?\d+$/.test(value)) return undefined;
    const n = BigInt(value);
    return n < -(2n ** 63n) || n > 2n ** 63n - 1n ? undefined : n;
  };
  const has = labels !== undefined && Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : "";
  switch (r.operator) {
    case "in":
    case "=":
    case "==":
      return has && r.values.includes(value);
    case "notin":
    case "!=":
      return !has || !r.values.includes(value);
    case "exists":
      return has;
    case "!":
      return !has;
    case "gt":
    case "lt": {
      if (!has || r.values.length !== 1) return false;
      const actual = int64(value);
      const bound = int64(r.values[0]);
      if (actual === undefined || bound === undefined) return false;
      return r.operator === "gt" ? actual > bound : actual < bound;
    }
  }
}

const keys = ["a", "b", "example.com/c", "constructor"];
const values = ["", "x", "y", "1", "20", "-3", "9223372036854775807", "9223372036854775808", "+4"];
const operators: Operator[] = ["in", "notin", "=", "==", "!=", "exists", "!", "gt", "lt"];

describe("compileRequirement()", () => {
  it("compileRequirement() agrees with the per-object interpretation it replaced", () => {
    // Requirements built directly, so shapes newRequirement would refuse (no values, two bounds) are covered too.
    const requirement = fc.record({
      key: fc.constantFrom(...keys),
      operator: fc.constantFrom(...operators),
      values: fc.uniqueArray(fc.constantFrom(...values), { maxLength: 3 }).map((vs) => vs.sort()),
    });
    const labels = fc.option(fc.dictionary(fc.constantFrom(...keys), fc.constantFrom(...values)), {
      nil: undefined,
    });
    fc.assert(
      fc.property(requirement, labels, (r, set) => {
        assert.equal(compileRequirement(r)(set), interpreted(r, set));
      }),
      { numRuns: 2000 },
    );
  });

  it("compileRequirement() reads the values it was compiled with, not later changes", () => {
    const r = newRequirement("tier", "in", ["a", "b"]);
    const matches = compileRequirement(r);
    r.values.push("c");
    assert.equal(matches({ tier: "c" }), false);
    assert.equal(matches({ tier: "b" }), true);
  });
});
