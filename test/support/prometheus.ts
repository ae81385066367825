// Debian's Prometheus for the cost control tests (.ci/run installs it); tests skip, saying so, without it.

import { existsSync } from "node:fs";

export const PROMETHEUS = process.env.PROMETHEUS_BINARY ?? "/usr/bin/prometheus";
export const prometheusSkip = existsSync(PROMETHEUS)
  ? false
  : `Prometheus is not installed (${PROMETHEUS}; .ci/run installs Debian's prometheus)`;

/** Prometheus's answer to an instant query at `time` (RFC 3339). */
export async function promql(
  base: string,
  query: string,
  time: string,
): Promise<{ metric: Record<string, string>; value: number }[]> {
  const url = new URL("/api/v1/query", base);
  url.searchParams.set("query", query);
  url.searchParams.set("time", String(Date.parse(time) / 1000));
  const body = (await (await fetch(url)).json()) as {
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}
