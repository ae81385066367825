// Percentiles and number formatting shared by the scenarios.

/** Latency summary in milliseconds over every sample (exact, not bucketed). */
export interface LatencySummary {
  samples: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function summarize(samples: ArrayLike<number>, count = samples.length): LatencySummary {
  const sorted = Float64Array.from({ length: count }, (_, i) => samples[i]).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    samples: count,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: count ? sorted[count - 1] : Number.NaN,
    mean: count ? total / count : Number.NaN,
  };
}

/** Rounds to `digits` decimals (for JSON output). */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function formatInt(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "-";
}

export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return "-";
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

export function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : "-";
}

export function formatMiB(kib: number): string {
  return `${(kib / 1024).toFixed(1)} MiB`;
}
