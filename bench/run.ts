// The platform benchmarks (issue 2), in one run on one machine: the server under test runs in its own child
// process pinned to CPU 0; this process (autocannon and the watch clients) is pinned to CPU 1.
//
//   node bench/run.ts [--only name[,name…]] [--duration seconds] [--watch-rate updates-per-second]
//                     [--quiet-wait seconds]
//
// Scenarios: baseline, get, list, create, patch, watch, rss. The baseline always runs first (every table shows
// the ratio to it). Prints one table per scenario and the goals; writes bench/results/latest.json (and a copy
// named after the start time). Before each scenario it waits (up to --quiet-wait seconds, default 20) until
// other processes use less than 10% of a CPU, and reports what else ran during every load run ("other CPU").

import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { LOAD_CPU, SERVER_CPU } from "./lib/platform.ts";
import { otherCpuMeter, pinToCpu } from "./lib/proc.ts";
import type { BenchContext, Scenario, ScenarioResult } from "./lib/scenario.ts";
import { baselineScenario } from "./scenarios/baseline.ts";
import { configSystemsScenario } from "./scenarios/config-systems.ts";
import { createScenario } from "./scenarios/create.ts";
import { getScenario } from "./scenarios/get.ts";
import { listScenario } from "./scenarios/list.ts";
import { patchScenario } from "./scenarios/patch.ts";
import { rssScenario } from "./scenarios/rss.ts";
import { DEFAULT_WATCH_RATE, watchScenario } from "./scenarios/watch.ts";

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    duration: { type: "string", default: "10" },
    "watch-rate": { type: "string", default: String(DEFAULT_WATCH_RATE) },
    "quiet-wait": { type: "string", default: "20" },
    help: { type: "boolean", default: false },
  },
});

const scenarios: Scenario[] = [
  baselineScenario,
  getScenario,
  listScenario,
  createScenario,
  patchScenario,
  watchScenario(Number(values["watch-rate"])),
  rssScenario,
  configSystemsScenario,
];

if (values.help) {
  console.log(
    `usage: node bench/run.ts [--only ${scenarios.map((s) => s.name).join(",")}] [--duration s] [--watch-rate n] [--quiet-wait s]`,
  );
  process.exit(0);
}

const duration = Number(values.duration);
if (!(duration > 0)) throw new Error(`--duration must be a positive number of seconds, got ${values.duration}`);
const only = values.only ? new Set(values.only.split(",").map((s) => s.trim())) : undefined;
for (const name of only ?? []) {
  if (!scenarios.some((s) => s.name === name)) throw new Error(`unknown scenario ${name}`);
}
const selected = scenarios.filter((s) => s.name === "baseline" || !only || only.has(s.name));

const pinned = pinToCpu(process.pid, LOAD_CPU);
const context: BenchContext = {
  duration,
  warmup: Math.min(2, Math.max(1, Math.round(duration / 5))),
  log: (message) => console.error(`  … ${message}`),
};
const QUIET = 0.1;
const quietWaitSeconds = Number(values["quiet-wait"]);

/** Other processes' CPU over one second (this process is idle meanwhile). */
async function otherCpuNow(): Promise<number> {
  const meter = otherCpuMeter(undefined);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return meter();
}

/** Waits until the machine is quiet or the budget is spent; returns the last reading and the seconds waited. */
async function waitForQuiet(): Promise<{ otherCpu: number; waitedSeconds: number }> {
  const started = performance.now();
  let other = await otherCpuNow();
  while (other > QUIET && performance.now() - started < quietWaitSeconds * 1000) other = await otherCpuNow();
  return { otherCpu: other, waitedSeconds: Math.round((performance.now() - started) / 1000) };
}

// Other work on the machine (a concurrent test run) skews every number: measure it before starting.
const otherCpuBefore = (await waitForQuiet()).otherCpu;
const startedAt = new Date();
const environment = {
  startedAt: startedAt.toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown",
  cpus: cpus().length,
  memoryGiB: Math.round(totalmem() / 1024 ** 3),
  pinning: pinned ? { server: SERVER_CPU, load: LOAD_CPU } : "none (taskset unavailable)",
  durationSeconds: duration,
  warmupSeconds: context.warmup,
  otherCpuBeforeStart: Math.round(otherCpuBefore * 100) / 100,
  loadAverageBeforeStart: loadavg()[0],
};
console.log(
  `Platform benchmarks — ${environment.node}, ${environment.cpus}× ${environment.cpu}, ${environment.memoryGiB} GiB; ` +
    `server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}${pinned ? "" : " (not pinned)"}; ` +
    `${duration} s measured after ${context.warmup} s warm-up per load run`,
);
if (otherCpuBefore > 0.1) {
  console.log(
    `WARNING: other processes used ${Math.round(otherCpuBefore * 100)}% of a CPU before the start; ` +
      `numbers will be low and noisy ("other CPU" column).`,
  );
}

function table(columns: string[], rows: string[][]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (c ?? "").padEnd(widths[i])).join(" | ")} |`;
  return [line(columns), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

const results: ScenarioResult[] = [];
const failures: { name: string; error: string }[] = [];
const quietness: Record<string, { otherCpu: number; waitedSeconds: number }> = {};
for (const scenario of selected) {
  console.log(`\n## ${scenario.title}`);
  const quiet = scenario === selected[0] ? { otherCpu: otherCpuBefore, waitedSeconds: 0 } : await waitForQuiet();
  quietness[scenario.name] = quiet;
  if (quiet.otherCpu > QUIET) {
    console.log(`WARNING: still ${Math.round(quiet.otherCpu * 100)}% of a CPU used by other processes at the start`);
  }
  const began = performance.now();
  try {
    const result = await scenario.run(context);
    results.push(result);
    for (const t of result.tables) console.log(table(t.columns, t.rows));
    for (const note of result.notes) console.log(`- ${note}`);
    for (const goal of result.goals)
      console.log(`- goal: ${goal.goal}: ${goal.actual} — ${goal.met ? "MET" : "NOT MET"}`);
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    failures.push({ name: scenario.name, error: message });
    console.log(`FAILED: ${message}`);
  }
  console.error(`  … ${scenario.name} took ${((performance.now() - began) / 1000).toFixed(1)} s`);
}

const goals = results.flatMap((r) => r.goals.map((g) => ({ scenario: r.name, ...g })));
if (goals.length) {
  console.log("\n## Goals");
  console.log(
    table(
      ["scenario", "goal", "actual", "met"],
      goals.map((g) => [g.scenario, g.goal, g.actual, g.met ? "yes" : "NO"]),
    ),
  );
}
const totalSeconds = (Date.now() - startedAt.getTime()) / 1000;
console.log(`\nTotal ${totalSeconds.toFixed(0)} s.`);

const output = {
  environment: { ...environment, totalSeconds: Math.round(totalSeconds) },
  scenarios: Object.fromEntries(
    results.map((r) => [r.name, { title: r.title, ...r.data, goals: r.goals, notes: r.notes }]),
  ),
  failures,
};
const dir = new URL("./results/", import.meta.url);
await mkdir(dir, { recursive: true });
const json = `${JSON.stringify(output, null, 2)}\n`;
await writeFile(new URL("latest.json", dir), json);
await writeFile(new URL(`${startedAt.toISOString().replace(/[:.]/g, "-")}.json`, dir), json);
console.log(`Results: bench/results/latest.json`);
if (failures.length) process.exitCode = 1;
