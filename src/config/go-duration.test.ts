import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { formatGoDuration, parseGoDuration } from "./go-duration.ts";

const MAX = (1n << 63n) - 1n;

describe("parseGoDuration()", () => {
  const valid: [string, bigint][] = [
    ["0", 0n],
    ["-0", 0n],
    ["1m", 60_000_000_000n],
    ["1h30m", 5_400_000_000_000n],
    ["1.5h", 5_400_000_000_000n],
    ["300ms", 300_000_000n],
    [".5s", 500_000_000n],
    ["5.s", 5_000_000_000n],
    ["-2m3.4s", -123_400_000_000n],
    ["+10ns", 10n],
    ["1µs", 1_000n],
    ["1μs", 1_000n],
    ["1us", 1_000n],
    ["2h45m0.5s", 9_900_500_000_000n],
    ["9223372036854775807ns", MAX],
  ];
  for (const [text, nanos] of valid) {
    it(`parseGoDuration() reads ${JSON.stringify(text)} as Go does`, () => {
      assert.equal(parseGoDuration(text), nanos);
    });
  }

  for (const text of [
    "",
    "1",
    "1d",
    "1 h",
    " 1h",
    "h",
    ".s",
    "-",
    "1h-1m",
    "1.2.3s",
    "9223372036854775808ns",
    "1e3s",
  ]) {
    it(`parseGoDuration() refuses ${JSON.stringify(text)}`, () => {
      assert.equal(parseGoDuration(text), undefined);
    });
  }

  it("parseGoDuration() reads back every duration formatGoDuration() writes", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -MAX, max: MAX }), (nanos) => {
        assert.equal(parseGoDuration(formatGoDuration(nanos)), nanos);
      }),
      { numRuns: 2000 },
    );
  });

  it("parseGoDuration() sums components in any order of units", () => {
    const unit = fc.constantFrom<[string, bigint]>(
      ["h", 3_600_000_000_000n],
      ["m", 60_000_000_000n],
      ["s", 1_000_000_000n],
      ["ms", 1_000_000n],
      ["us", 1_000n],
      ["ns", 1n],
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 10_000 }), unit), { minLength: 1, maxLength: 6 }),
        (parts) => {
          const text = parts.map(([n, [u]]) => `${n}${u}`).join("");
          const expected = parts.reduce((sum, [n, [, scale]]) => sum + BigInt(n) * scale, 0n);
          assert.equal(parseGoDuration(text), expected);
        },
      ),
    );
  });

  it("parseGoDuration() refuses any text with a unit Go does not know", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.stringMatching(/^[a-z]{1,3}$/).filter((u) => !["h", "m", "s", "ms", "us", "ns"].includes(u)),
        (n, u) => {
          assert.equal(parseGoDuration(`${n}${u}`), undefined);
        },
      ),
    );
  });
});

describe("formatGoDuration()", () => {
  it("formatGoDuration() writes Go's Duration.String() forms", () => {
    assert.equal(formatGoDuration(0n), "0s");
    assert.equal(formatGoDuration(5_400_000_000_000n), "1h30m0s");
    assert.equal(formatGoDuration(1_500_000_000n), "1.5s");
    assert.equal(formatGoDuration(300_000_000n), "300ms");
    assert.equal(formatGoDuration(-1_000n), "-1µs");
  });
});
