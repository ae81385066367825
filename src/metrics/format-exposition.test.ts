import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { formatExposition } from "./format-exposition.ts";
import { type ExpositionSample, parseExposition } from "./parse-exposition.ts";

const LIMITS = { maxChars: 1 << 20, maxSamples: 1000, maxLabels: 16 };

/** Label values with what must be escaped, what looks like syntax, and any Unicode. */
const labelValue = fc.oneof(
  fc.string({ unit: fc.constantFrom('"', "\\", "\n", "{", "}", ",", "=", " ", "#", "a", "n") }),
  fc.string({ unit: "grapheme" }),
);
const sample: fc.Arbitrary<ExpositionSample> = fc.record(
  {
    name: fc.constantFrom("vcp_usage_cpu_seconds_total", "up", "a:b", "_x1"),
    labels: fc.uniqueArray(fc.tuple(fc.constantFrom("a", "job", "le", "_b", "c9"), labelValue), {
      selector: ([name]) => name,
      maxLength: 5,
    }),
    value: fc.constantFrom("0", "1.5", "-2e-3", "1E+10", ".5", "7.", "NaN", "+Inf", "-Inf"),
    timestamp: fc.constantFrom("1764565200000", "-1", "0"),
  },
  { requiredKeys: ["name", "labels", "value"], noNullPrototype: true },
);

/** The samples grouped by name, in the order of the names' first samples. */
const grouped = (samples: ExpositionSample[]) => {
  const names = [...new Set(samples.map((s) => s.name))];
  return names.flatMap((name) => samples.filter((s) => s.name === name));
};

describe("formatExposition()", () => {
  it("formatExposition() writes each name's samples in one group under its TYPE line", () => {
    const text = formatExposition([
      { name: "b", labels: [["x", 'q"\\\n']], value: "1" },
      { name: "a", labels: [], value: "2", timestamp: "3" },
      { name: "b", labels: [], value: "NaN" },
    ]);
    assert.equal(text, '# TYPE b untyped\nb{x="q\\"\\\\\\n"} 1\nb NaN\n# TYPE a untyped\na 2 3\n');
    assert.equal(formatExposition([]), "");
  });

  it("formatExposition() writes text parseExposition() reads back to the same samples (any label values)", () => {
    fc.assert(
      fc.property(fc.array(sample, { maxLength: 12 }), (samples) => {
        const text = formatExposition(samples);
        assert.deepEqual(parseExposition(text, LIMITS), grouped(samples));
        assert.equal(formatExposition(parseExposition(text, LIMITS)), text);
      }),
    );
  });
});
