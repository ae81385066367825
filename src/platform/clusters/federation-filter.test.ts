import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ExpositionError, type ExpositionSample, parseExposition } from "../../metrics/parse-exposition.ts";
import { FEDERATION_LIMITS, filterFederation } from "./federation-filter.ts";

/** Cluster "edge" runs shop/vc1, shop/vc2 and team/vc1. */
const allowance = {
  cluster: "edge",
  virtualClusters: new Map([
    ["shop", new Set(["vc1", "vc2"])],
    ["team", new Set(["vc1"])],
  ]),
};
const CPU = "vcp_usage_cpu_seconds_total";
const TS = "1764565200000";
const agentRow = `${CPU}{cluster="edge",component="agent",instance="127.0.0.1:40000",job="agent"} 12.5 ${TS}`;
const vcRow = (project: string, vc: string, cluster = "edge") =>
  `${CPU}{cluster="${cluster}",component="virtualcluster",instance="127.0.0.1:40001",job="virtualcluster-0f8fad5b",project="${project}",virtualcluster="${vc}"} 3 ${TS}`;
const answer = (...lines: string[]) => `# TYPE ${CPU} untyped\n${lines.join("\n")}\n`;
const kept = (text: string) => filterFederation(text, allowance);

describe("filterFederation()", () => {
  it("filterFederation() keeps the agent's own row and its placed virtual clusters' rows, unchanged", () => {
    const text = answer(agentRow, vcRow("shop", "vc1"), vcRow("team", "vc1"));
    const filtered = kept(text);
    assert.equal(filtered.text, text);
    assert.deepEqual([filtered.kept, filtered.dropped], [3, 0]);
    const memory =
      'vcp_usage_resident_memory_bytes{cluster="edge",component="agent",project="",virtualcluster=""} 1e+06';
    assert.equal(kept(`${memory}\n`).text, `# TYPE vcp_usage_resident_memory_bytes untyped\n${memory}\n`);
  });

  it("filterFederation() drops what another cluster or a virtual cluster not placed here would report", () => {
    const forged = [
      `${CPU}{project="victim-shop",cluster="other",virtualcluster="web",component="virtualcluster"} 9000`,
      vcRow("shop", "vc1", "other"),
      vcRow("shop", "vc3"),
      vcRow("team", "vc2"),
      vcRow("victim-shop", "vc1"),
      `${CPU}{component="virtualcluster",project="shop",virtualcluster="vc1"} 1`,
      `${CPU}{cluster="edge",project="shop",virtualcluster="vc1"} 1`,
      `${CPU}{cluster="edge",component="agent",project="shop",virtualcluster="vc1"} 1`,
      `${CPU}{cluster="edge",component="agent",virtualcluster="vc1"} 1`,
      `${CPU}{cluster="edge",component="platform"} 1`,
      `${CPU}{cluster="edge",component="virtualcluster",project="",virtualcluster=""} 1`,
    ];
    const filtered = kept(answer(agentRow, ...forged));
    assert.equal(filtered.text, answer(agentRow));
    assert.deepEqual([filtered.kept, filtered.dropped], [1, forged.length]);
  });

  it("filterFederation() drops other names, other labels, values that are no count, and repeats of a series", () => {
    const others = [
      'up{cluster="edge",component="agent"} 1',
      'vcp_usagex{cluster="edge",component="agent"} 1',
      `${CPU}{cluster="edge",component="agent",le="1"} 1`,
      `${CPU}{cluster="edge",component="agent",exported_cluster="other"} 1`,
      `${CPU}{cluster="edge",component="agent",__name__="x"} 1`,
      `${CPU}{cluster="edge",component="agent"} NaN`,
      `${CPU}{cluster="edge",component="agent"} +Inf`,
      `${CPU}{cluster="edge",component="agent"} -1`,
      `${CPU}{cluster="edge",component="agent"} 1e400`,
      // The same series as agentRow: Prometheus takes an empty label as none.
      `${CPU}{project="",job="agent",instance="127.0.0.1:40000",component="agent",cluster="edge"} 13 ${TS}`,
      agentRow,
    ];
    const filtered = kept(answer(agentRow, ...others));
    assert.equal(filtered.text, answer(agentRow));
    assert.deepEqual([filtered.kept, filtered.dropped], [1, others.length]);
  });

  it("filterFederation() refuses a malformed answer, or one past its limits, as a whole", () => {
    for (const text of [
      answer(agentRow, `${CPU}{cluster="edge" 1`),
      answer(agentRow, `${CPU}{cluster="edge\\z"} 1`),
      answer(agentRow, "garbage"),
      `${agentRow}\n`.repeat(FEDERATION_LIMITS.maxSamples + 1),
      `# ${"x".repeat(FEDERATION_LIMITS.maxChars)}`,
    ]) {
      assert.throws(() => kept(text), ExpositionError);
    }
  });

  it("filterFederation() keeps exactly the allowed series, unchanged, as valid exposition text (random answers)", () => {
    fc.assert(fc.property(answers, fc.context(), checkAnswer), { numRuns: 500 });
  });
});

// The property: answers of random samples (allowed ones, near misses and anything), written with random blanks,
// trailing commas, comments and HELP lines. What survives must be what the model below allows, each as it was.

const IDENTITIES = [
  ["", "", "agent"],
  ["shop", "vc1", "virtualcluster"],
  ["shop", "vc2", "virtualcluster"],
  ["team", "vc1", "virtualcluster"],
];
/** Value tokens and whether each is a count (finite, not negative). */
const VALUES: [string, boolean][] = [
  ["0", true],
  ["12.5", true],
  ["1e+06", true],
  [".5", true],
  ["-0", true],
  ["-1", false],
  ["NaN", false],
  ["+Inf", false],
  ["-Inf", false],
  ["1e400", false],
];
const NAMES = [CPU, "vcp_usage_resident_memory_bytes", "vcp_usage_", "up", "vcp_usage"];
const LABEL_NAMES = ["cluster", "project", "virtualcluster", "component", "job", "instance", "le", "exported_job"];
const tricky = fc.string({ unit: fc.constantFrom('"', "\\", "\n", "{", "}", ",", "=", " ", "\t", "#", "e", "😀") });
const near = fc.constantFrom(
  "edge",
  "other",
  "shop",
  "team",
  "vc1",
  "vc2",
  "vc3",
  "agent",
  "virtualcluster",
  "platform",
  "",
);

interface Written {
  sample: ExpositionSample;
  /** How it is written: blanks, a trailing comma, a comment before it. */
  style: { blank: string; comma: boolean; comment?: string };
}

const jobOrInstance = fc.option(fc.oneof(fc.constantFrom("agent", "127.0.0.1:40000"), tricky), { nil: undefined });
const allowedLabels = fc
  .tuple(fc.constantFrom(...IDENTITIES), fc.boolean(), jobOrInstance, jobOrInstance)
  .chain(([[project, virtualcluster, component], explicit, job, instance]) => {
    const labels: [string, string][] = [
      ["cluster", "edge"],
      ["component", component],
    ];
    if (project || explicit) labels.push(["project", project], ["virtualcluster", virtualcluster]);
    if (job !== undefined) labels.push(["job", job]);
    if (instance !== undefined) labels.push(["instance", instance]);
    return fc.shuffledSubarray(labels, { minLength: labels.length, maxLength: labels.length });
  });
const anyValue = fc.oneof(near, tricky);
/** Allowed labels with one thing changed: a value, a label left out, a label added. */
const nearMiss = fc
  .tuple(allowedLabels, fc.nat(), near, fc.constantFrom(...LABEL_NAMES), fc.constantFrom("value", "out", "in"))
  .map(([labels, at, value, added, change]): [string, string][] => {
    const i = at % labels.length;
    if (change === "value") return labels.map(([name, old], j) => [name, i === j ? value : old]);
    if (change === "out") return labels.filter((_, j) => j !== i);
    return labels.some(([name]) => name === added) ? labels : [...labels, [added, value]];
  });
const anyLabels = fc.uniqueArray(fc.tuple(fc.constantFrom(...LABEL_NAMES), anyValue), {
  selector: ([name]) => name,
  maxLength: 7,
});
const written: fc.Arbitrary<Written> = fc.record({
  sample: fc.record(
    {
      name: fc.constantFrom(...NAMES),
      labels: fc.oneof(allowedLabels, nearMiss, anyLabels),
      value: fc.constantFrom(...VALUES.map(([token]) => token)),
      timestamp: fc.constantFrom(TS, "-5"),
    },
    { requiredKeys: ["name", "labels", "value"], noNullPrototype: true },
  ),
  style: fc.record(
    {
      blank: fc.constantFrom("", " ", "\t ", "  "),
      comma: fc.boolean(),
      comment: fc.constantFrom("# a comment", '# HELP x with \\\\ and \\n and "', "", "# TYPE"),
    },
    { requiredKeys: ["blank", "comma"], noNullPrototype: true },
  ),
});

/** Answers of samples from a small pool, so that series come again (the first one counts). */
const answers = fc
  .tuple(fc.array(written, { minLength: 1, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 25 }))
  .map(([pool, picks]) => picks.map((pick) => pool[pick % pool.length]));

const escapeValue = (value: string) => value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");

function write({ sample, style }: Written): string {
  const b = style.blank;
  const labels = sample.labels.map(([name, value]) => `${b}${name}${b}=${b}"${escapeValue(value)}"${b}`).join(",");
  const braces = labels || style.comma ? `{${labels}${style.comma && labels ? "," : ""}}` : "";
  const timestamp = sample.timestamp === undefined ? "" : ` ${b}${sample.timestamp}`;
  const comment = style.comment === undefined ? "" : `${style.comment}\n`;
  return `${comment}${b}${sample.name}${b}${braces} ${b}${sample.value}${timestamp}${b}\n`;
}

/** The model: what edge may report, written out apart from the code. */
function mayReport(sample: ExpositionSample): boolean {
  const labels = Object.fromEntries(sample.labels);
  const count = VALUES.find(([token]) => token === sample.value)?.[1] === true;
  const known = sample.labels.every(([name]) => LABEL_NAMES.slice(0, 6).includes(name));
  const identity = IDENTITIES.some(
    ([project, virtualcluster, component]) =>
      (labels.project ?? "") === project &&
      (labels.virtualcluster ?? "") === virtualcluster &&
      labels.component === component,
  );
  return sample.name.startsWith("vcp_usage_") && count && known && labels.cluster === "edge" && identity;
}

function expected(samples: ExpositionSample[]): ExpositionSample[] {
  const seen = new Set<string>();
  const allowed = samples.filter((sample) => {
    const labels = sample.labels.filter(([, value]) => value !== "").sort(([a], [b]) => a.localeCompare(b));
    const key = JSON.stringify([sample.name, labels]);
    if (!mayReport(sample) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const names = [...new Set(allowed.map((sample) => sample.name))];
  return names.flatMap((name) => allowed.filter((sample) => sample.name === name));
}

/** Each name's samples in one group, after its one TYPE line. */
function assertGrouped(text: string): void {
  const done = new Set<string>();
  let current = "";
  for (const line of text.split("\n").filter(Boolean)) {
    if (line.startsWith("# TYPE ")) {
      const name = line.split(" ")[2];
      assert.ok(!done.has(name), `a second group of ${name}`);
      done.add(name);
      current = name;
      continue;
    }
    assert.ok(line.startsWith(`${current}{`), `${line} outside its group`);
  }
}

function checkAnswer(answers: Written[], context: fc.ContextValue): void {
  const text = answers.map(write).join("");
  context.log(text);
  const samples = answers.map((a) => a.sample);
  const filtered = filterFederation(text, allowance);
  const survivors = parseExposition(filtered.text, FEDERATION_LIMITS);
  assert.deepEqual(survivors, expected(samples));
  assert.equal(filtered.kept, survivors.length);
  assert.equal(filtered.dropped, samples.length - survivors.length);
  assertGrouped(filtered.text);
  assert.equal(filterFederation(filtered.text, allowance).text, filtered.text);
}
