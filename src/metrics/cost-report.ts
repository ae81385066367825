// The Cost page's figures: usage per project and virtual cluster over a range, from PromQL over the vcp_usage_*
// series, and the estimated cost from the Config's per-unit prices:
//   CPU core-hours      increase(cpu seconds)[range] / 3600                          x prices.cpuCoreHour
//   memory GiB-hours    sum_over_time(resident bytes)[range] x scrape interval / GiB / 3600
//                                                                                    x prices.memoryGiBHour
//   storage GiB-months  sum_over_time(stored bytes)[range] x scrape interval / GiB / 30 days
//                                                                                    x prices.storageGiBMonth
//   API requests        increase(requests)[range]                                   x prices.millionApiRequests / 1e6
// Memory and storage count each sample for one scrape interval, so a virtual cluster pays for the part of the
// range it existed in, not the whole range.
// The report carries its PromQL, so every figure can be checked against Prometheus (the tests do).
// A virtual cluster on a connected cluster whose costEstimator.replicas is 0 shows its usage with no estimate
// (estimated: false, cost 0, left out of the total); the "platform and agents" row is always estimated.

import type { CostPrices } from "../config/system-settings.ts";
import { queryMatrix, queryVector } from "./prometheus-query.ts";
import { USAGE_METRICS } from "./usage.ts";

const GIB = 1024 ** 3;
const BY = "sum by (project, virtualcluster)";

export interface CostRow {
  project: string;
  virtualcluster: string;
  cpuCoreHours: number;
  memoryGiBHours: number;
  storageGiBMonths: number;
  apiRequests: number;
  syncedObjects: number;
  cost: number;
  /** False for a virtual cluster on a cluster whose cost estimator is off (costEstimator.replicas 0). */
  estimated: boolean;
}

export interface CostReport {
  start: string;
  end: string;
  prices: CostPrices;
  rows: CostRow[];
  total: number;
  queries: Record<"cpu" | "memory" | "storage" | "requests" | "objects" | "cpuSeries" | "memorySeries", string> & {
    unestimated?: string;
  };
  series: {
    /** CPU cores used over time, per project and virtual cluster. */
    cpu: { project: string; virtualcluster: string; points: [number, number][] }[];
    /** Resident memory (bytes) over time. */
    memory: { project: string; virtualcluster: string; points: [number, number][] }[];
  };
}

export function costQueries(
  rangeSeconds: number,
  stepSeconds: number,
  scrapeIntervalSeconds: number,
  unestimatedClusters: readonly string[] = [],
) {
  const range = `${Math.max(1, Math.round(rangeSeconds))}s`;
  const window = `${Math.max(4 * stepSeconds, 60)}s`;
  // Cluster names are DNS labels: nothing in them needs escaping in a regular expression.
  const off = unestimatedClusters.length
    ? {
        unestimated: `group by (project, virtualcluster) (last_over_time(${USAGE_METRICS.cpu}{cluster=~"${unestimatedClusters.join("|")}",virtualcluster!=""}[${range}]))`,
      }
    : {};
  return {
    ...off,
    cpu: `${BY} (increase(${USAGE_METRICS.cpu}[${range}]))`,
    // Byte-seconds: each sample stands for one scrape interval.
    memory: `${BY} (sum_over_time(${USAGE_METRICS.memory}[${range}])) * ${scrapeIntervalSeconds}`,
    storage: `${BY} (sum_over_time(${USAGE_METRICS.storage}[${range}])) * ${scrapeIntervalSeconds}`,
    requests: `${BY} (increase(${USAGE_METRICS.requests}[${range}]))`,
    objects: `${BY} (max_over_time(${USAGE_METRICS.objects}[${range}]))`,
    cpuSeries: `${BY} (rate(${USAGE_METRICS.cpu}[${window}]))`,
    memorySeries: `${BY} (${USAGE_METRICS.memory})`,
  };
}

const round = (value: number, digits = 6) => Math.round(value * 10 ** digits) / 10 ** digits;

export async function costReport(options: {
  prometheus: string;
  start: Date;
  end: Date;
  stepSeconds: number;
  /** How often Prometheus scrapes the usage series: what one memory or storage sample stands for. */
  scrapeIntervalSeconds: number;
  prices: CostPrices;
  /** Connected clusters whose cost estimator is off (costEstimator.replicas 0). */
  unestimatedClusters?: readonly string[];
}): Promise<CostReport> {
  const { prometheus, start, end, stepSeconds, prices } = options;
  const rangeSeconds = (end.getTime() - start.getTime()) / 1000;
  const queries = costQueries(rangeSeconds, stepSeconds, options.scrapeIntervalSeconds, options.unestimatedClusters);
  const [unestimated, cpu, memory, storage, requests, objects, cpuSeries, memorySeries] = await Promise.all([
    queries.unestimated ? queryVector(prometheus, queries.unestimated, end) : [],
    queryVector(prometheus, queries.cpu, end),
    queryVector(prometheus, queries.memory, end),
    queryVector(prometheus, queries.storage, end),
    queryVector(prometheus, queries.requests, end),
    queryVector(prometheus, queries.objects, end),
    queryMatrix(prometheus, queries.cpuSeries, start, end, stepSeconds),
    queryMatrix(prometheus, queries.memorySeries, start, end, stepSeconds),
  ]);
  const rows = new Map<string, CostRow>();
  const row = (metric: Record<string, string>) => {
    const project = metric.project ?? "";
    const virtualcluster = metric.virtualcluster ?? "";
    const key = `${project}/${virtualcluster}`;
    let found = rows.get(key);
    if (!found) {
      found = {
        project,
        virtualcluster,
        cpuCoreHours: 0,
        memoryGiBHours: 0,
        storageGiBMonths: 0,
        apiRequests: 0,
        syncedObjects: 0,
        cost: 0,
        estimated: true,
      };
      rows.set(key, found);
    }
    return found;
  };
  for (const s of cpu) row(s.metric).cpuCoreHours = s.value / 3600;
  for (const s of memory) row(s.metric).memoryGiBHours = s.value / GIB / 3600;
  for (const s of storage) row(s.metric).storageGiBMonths = s.value / GIB / (30 * 86_400);
  for (const s of requests) row(s.metric).apiRequests = s.value;
  for (const s of objects) row(s.metric).syncedObjects = s.value;
  for (const s of unestimated) row(s.metric).estimated = false;
  let total = 0;
  // The cost is priced from the figures as shown, so a reader can multiply them out.
  const out = [...rows.values()].map((raw) => {
    const r = {
      ...raw,
      cpuCoreHours: round(raw.cpuCoreHours),
      memoryGiBHours: round(raw.memoryGiBHours),
      storageGiBMonths: round(raw.storageGiBMonths, 9),
      apiRequests: Math.round(raw.apiRequests),
      syncedObjects: Math.round(raw.syncedObjects),
    };
    if (!r.estimated) return { ...r, cost: 0 };
    const cost =
      r.cpuCoreHours * prices.cpuCoreHour +
      r.memoryGiBHours * prices.memoryGiBHour +
      r.storageGiBMonths * prices.storageGiBMonth +
      (r.apiRequests / 1e6) * prices.millionApiRequests;
    total += cost;
    return { ...r, cost: round(cost, 9) };
  });
  out.sort((a, b) => a.project.localeCompare(b.project) || a.virtualcluster.localeCompare(b.virtualcluster));
  const points = (series: typeof cpuSeries) =>
    series.map((s) => ({
      project: s.metric.project ?? "",
      virtualcluster: s.metric.virtualcluster ?? "",
      points: s.values,
    }));
  return {
    start: start.toISOString(),
    end: end.toISOString(),
    prices,
    rows: out,
    total: round(total, 9),
    queries,
    series: { cpu: points(cpuSeries), memory: points(memorySeries) },
  };
}
