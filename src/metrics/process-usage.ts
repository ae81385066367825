// This process's CPU time and resident memory, as a usage report carries them. Apart from usage.ts (the series,
// which load prom-client) so that what only reports them (the cluster agent's heartbeat) does not load prom-client.

import type { UsageReport } from "./usage.ts";

/** This process's CPU seconds and resident memory. */
export function processUsage(): Pick<UsageReport, "cpuSeconds" | "residentMemoryBytes"> {
  const cpu = process.cpuUsage();
  return { cpuSeconds: (cpu.user + cpu.system) / 1e6, residentMemoryBytes: process.memoryUsage.rss() };
}
