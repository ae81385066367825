import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ExpositionError, parseExposition } from "./parse-exposition.ts";

const LIMITS = { maxChars: 1 << 20, maxSamples: 1000, maxLabels: 8 };
const parse = (text: string, limits = LIMITS) => parseExposition(text, limits);
const refused = (text: string, line: RegExp, limits = LIMITS) =>
  assert.throws(
    () => parse(text, limits),
    (error: unknown) => error instanceof ExpositionError && line.test(error.message),
  );

describe("parseExposition()", () => {
  it("parseExposition() reads what Prometheus's /federate writes", () => {
    const text = [
      "# TYPE vcp_usage_cpu_seconds_total untyped",
      'vcp_usage_cpu_seconds_total{cluster="edge",component="agent",instance="127.0.0.1:4000",job="agent"} 1.5e+02 1764565200000',
      'vcp_usage_cpu_seconds_total{cluster="edge",component="virtualcluster",project="shop",virtualcluster="vc1"} 0.25 1764565200000',
      "",
    ].join("\n");
    assert.deepEqual(parse(text), [
      {
        name: "vcp_usage_cpu_seconds_total",
        labels: [
          ["cluster", "edge"],
          ["component", "agent"],
          ["instance", "127.0.0.1:4000"],
          ["job", "agent"],
        ],
        value: "1.5e+02",
        timestamp: "1764565200000",
      },
      {
        name: "vcp_usage_cpu_seconds_total",
        labels: [
          ["cluster", "edge"],
          ["component", "virtualcluster"],
          ["project", "shop"],
          ["virtualcluster", "vc1"],
        ],
        value: "0.25",
        timestamp: "1764565200000",
      },
    ]);
  });

  it("parseExposition() unescapes label values and takes blanks, comments, a trailing comma and no labels", () => {
    const text = [
      "# HELP up whether \\\\ it \\n is up",
      '# a comment { with " anything \\q',
      "   ",
      'up { a = "x\\\\y\\"z\\nw" , b="{},=" , } \t -Inf',
      "up_total 1 -5",
      "x:y NaN",
    ].join("\n");
    assert.deepEqual(parse(text), [
      {
        name: "up",
        labels: [
          ["a", 'x\\y"z\nw'],
          ["b", "{},="],
        ],
        value: "-Inf",
      },
      { name: "up_total", labels: [], value: "1", timestamp: "-5" },
      { name: "x:y", labels: [], value: "NaN" },
    ]);
    assert.deepEqual(parse(""), []);
  });

  it("parseExposition() refuses the whole text at the first line that is not exposition text, naming only the line", () => {
    refused('ok 1\nbad{a="b" 1', /^line 2: expected , or \}/);
    refused('m{a="b\\x"} 1', /^line 1: an escape other than/);
    refused('m{a="b\n"} 1', /^line 1: a label value without its closing quote/);
    refused('m{a="b",a="c"} 1', /^line 1: a label name twice/);
    refused('m{1a="b"} 1', /^line 1: expected a label name/);
    refused('m{a:b="c"} 1', /^line 1: expected = after a label name/);
    refused("m{a=b} 1", /^line 1: expected a quoted label value/);
    refused("1m 1", /^line 1: expected a metric name/);
    refused("m", /^line 1: expected a sample value/);
    refused("m 0x10", /^line 1: expected a sample value/);
    refused("m 1_000", /^line 1: expected a sample value/);
    refused("m Infinity", /^line 1: expected a sample value/);
    refused("m 1e", /^line 1: expected a sample value/);
    refused("m .", /^line 1: expected a sample value/);
    refused("m 1 1.5", /^line 1: expected a timestamp/);
    refused("m 1 1234567890123456789", /^line 1: expected a timestamp/);
    refused("m 1 2 3", /^line 1: expected the end of the line/);
    refused("m 1\r\n", /^line 1: expected a sample value/);
    refused("# TYPE m gauge\n# TYPE m counter", /^line 2: a second TYPE line/);
    refused("# TYPE m histogramm", /^line 1: expected counter, gauge/);
    refused("# HELP m \\t", /^line 1: an escape other than/);
    refused("# HELP m \\", /^line 1: an escape other than/);
    refused("m \ud800", /^not well-formed Unicode/);
  });

  it("parseExposition() refuses text past its limits: characters, samples, labels of a sample", () => {
    refused("m 1\n".repeat(10), /^more than 39 characters/, { ...LIMITS, maxChars: 39 });
    assert.equal(parse("m 1\n".repeat(10), { ...LIMITS, maxChars: 40 }).length, 10);
    refused("m 1\n".repeat(4), /^line 4: more than 3 samples/, { ...LIMITS, maxSamples: 3 });
    refused('m{a="",b="",c=""} 1', /^line 1: more than 2 labels/, { ...LIMITS, maxLabels: 2 });
  });

  it("parseExposition() reads a megabyte of input made to backtrack in one pass", () => {
    const limits = { maxChars: 4 << 20, maxSamples: 1 << 20, maxLabels: 8 };
    assert.equal(parse(`m{a="${"\\\\".repeat(1 << 19)}"} 1`, limits)[0].labels[0][1].length, 1 << 19);
    assert.equal(parse("m 1\n".repeat(1 << 18), limits).length, 1 << 18);
    assert.equal(parse(`# HELP m ${"\\\\".repeat(1 << 19)}`, limits).length, 0);
    refused(`m{a="${" ".repeat(1 << 20)}`, /^line 1: a label value without its closing quote/, limits);
    refused(`m ${"1".repeat(1 << 20)}e`, /^line 1: expected a sample value/, limits);
    refused(`m{${" ".repeat(1 << 20)}`, /^line 1: expected a label name/, limits);
    refused(`${'m{a=""} 1\n'.repeat(1 << 16)}m{a="b`, /^line 65537: a label value without/, limits);
  });
});

describe("parseExposition() on any text", () => {
  it("parseExposition() either reads a text or refuses it with an ExpositionError, nothing else", () => {
    const piece = fc.constantFrom("m", "vcp_usage_x", "{", "}", ",", "=", '"', "\\", "\n", " ", "\t", "#", " HELP ");
    const more = fc.constantFrom(" TYPE ", "counter", "a", "1", "1.5e3", "NaN", "-", "+Inf", ":", "😀", "\r");
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, more), { maxLength: 40 }), (pieces) => {
        try {
          for (const sample of parse(pieces.join(""))) assert.ok(sample.name.length > 0);
        } catch (error) {
          assert.ok(error instanceof ExpositionError, String(error));
          assert.match(error.message, /^line \d+: [^\n]+$/);
        }
      }),
      { numRuns: 500 },
    );
  });
});
