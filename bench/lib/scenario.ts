// What a scenario is, what it returns, and the standard table row for one load run.

import type { LoadResult } from "./load.ts";
import { formatInt, formatMs, formatRatio, round } from "./stats.ts";

export interface BaselineInfo {
  /** Requests per second of the bare server, same run. */
  rate: number;
  /** Its CPU time per request, µs (the figure that holds on a busy machine). */
  micros?: number;
  p50: number;
  p99: number;
  /** Size of the JSON body it serves (= the platform's user GET body). */
  bodyBytes: number;
  connections: number;
}

export interface BenchContext {
  /** Seconds of each measured load run. */
  duration: number;
  /** Seconds of the unmeasured run before each measured one. */
  warmup: number;
  /** Set once the baseline scenario ran (it always runs first). */
  baseline?: BaselineInfo;
  log(message: string): void;
}

export interface Goal {
  goal: string;
  actual: string;
  met: boolean;
}

export interface Table {
  columns: string[];
  rows: string[][];
}

export interface ScenarioResult {
  name: string;
  title: string;
  tables: Table[];
  goals: Goal[];
  notes: string[];
  /** Raw numbers for results/latest.json. */
  data: Record<string, unknown>;
}

export interface Scenario {
  name: string;
  title: string;
  run(context: BenchContext): Promise<ScenarioResult>;
}

export const LOAD_COLUMNS = [
  "measurement",
  "conns",
  "req/s",
  "p50 ms",
  "p99 ms",
  "max ms",
  "vs baseline req/s",
  "server CPU",
  "server µs/req",
  "vs bare µs/req",
  "load CPU",
  "other CPU",
  "responses",
];

/**
 * Server CPU time per successful response, in µs: the number to compare between code versions on a shared
 * machine (throughput moves with whatever else runs; the work per request much less).
 */
export function serverMicrosPerRequest(result: LoadResult): number | undefined {
  if (result.serverCpu === undefined || result.ok === 0) return undefined;
  return (result.serverCpu * result.seconds * 1e6) / result.ok;
}

/** Cores as a percentage of one CPU. */
export function percent(cores: number | undefined): string {
  return cores === undefined ? "-" : `${Math.round(cores * 100)}%`;
}

export function statusText(result: LoadResult): string {
  const codes = Object.entries(result.status)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, count]) => `${code}×${formatInt(count)}`);
  if (result.errors) codes.push(`errors×${result.errors}`);
  if (result.timeouts) codes.push(`timeouts×${result.timeouts}`);
  return codes.join(" ") || "none";
}

export function loadRow(label: string, connections: number, result: LoadResult, baseline?: BaselineInfo): string[] {
  const micros = serverMicrosPerRequest(result);
  return [
    label,
    String(connections),
    formatInt(result.rate),
    formatMs(result.latency.p50),
    formatMs(result.latency.p99),
    formatMs(result.latency.max),
    baseline ? formatRatio(result.rate / baseline.rate) : "-",
    percent(result.serverCpu),
    micros === undefined ? "-" : micros.toFixed(0),
    micros !== undefined && baseline?.micros ? formatRatio(micros / baseline.micros) : "-",
    percent(result.loadCpu),
    percent(result.otherCpu),
    statusText(result),
  ];
}

/** The numbers of one load run for the JSON file. */
export function loadData(connections: number, result: LoadResult, baseline?: BaselineInfo): Record<string, unknown> {
  const micros = serverMicrosPerRequest(result);
  return {
    connections,
    seconds: round(result.seconds),
    responses: result.responses,
    ok: result.ok,
    ratePerSecond: round(result.rate, 1),
    latencyMs: {
      p50: round(result.latency.p50, 3),
      p99: round(result.latency.p99, 3),
      max: round(result.latency.max, 3),
      mean: round(result.latency.mean, 3),
    },
    ratioToBaseline: baseline ? round(result.rate / baseline.rate, 3) : undefined,
    status: result.status,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerResponse: Math.round(result.bytesPerResponse),
    serverCpu: result.serverCpu === undefined ? undefined : round(result.serverCpu, 2),
    serverMicrosPerRequest: micros === undefined ? undefined : round(micros, 1),
    loadCpu: round(result.loadCpu, 2),
    otherCpu: round(result.otherCpu, 2),
  };
}

/** Server CPU per request as a multiple of the bare server's in the same run (NaN without a baseline). */
export function cpuRatio(result: LoadResult, baseline: BaselineInfo | undefined): number {
  const micros = serverMicrosPerRequest(result);
  return micros !== undefined && baseline?.micros ? micros / baseline.micros : Number.NaN;
}
