// Debian's Prometheus for the cost control tests (.ci/run installs it); tests skip, saying so, without it.

import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

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

/** The pid of the Prometheus (of this user) listening at `url`, from /proc/<pid>/cmdline; undefined if none. */
export async function prometheusPid(url: string): Promise<number | undefined> {
  const listen = `--web.listen-address=${new URL(url).host}`;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.split("\0").includes(listen)) return Number(entry);
  }
  return undefined;
}

/** The environment a process started with (/proc/<pid>/environ). */
export async function environOf(pid: number): Promise<Record<string, string>> {
  const text = await readFile(`/proc/${pid}/environ`, "utf8");
  return Object.fromEntries(
    text
      .split("\0")
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}
