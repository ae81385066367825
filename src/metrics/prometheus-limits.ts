// What a Kubernetes container's resources mean for the Prometheus we run as a process (the Config's
// costControl.*.metrics.resources):
// - limits.memory: GOMEMLIMIT at 90 % of it (the Go runtime collects harder as it nears it; 90 % is Prometheus's own
//   --auto-gomemlimit ratio, leaving room for memory the runtime does not govern), and a hard limit the runner
//   enforces like the kernel's OOM killer in a memory cgroup: a process whose anonymous resident memory (RssAnon:
//   the TSDB's memory-mapped files are left out, as a cgroup reclaims them) passes the limit is killed, and its
//   owner starts it again.
// - limits.cpu: GOMAXPROCS, whole cores rounded up (a process has no CFS quota, so 500m allows one core).
// - requests: what the scheduler would check. A machine with fewer cores or less memory than requested does not
//   start Prometheus and says so, as a pod that fits no node stays Pending.

import { readFile } from "node:fs/promises";
import { availableParallelism, totalmem } from "node:os";
import { quantityValue } from "../config/formats.ts";

export interface ProcessResources {
  /** Quantities as written in the Config ("2Gi", "1500m"); absent or empty: none. */
  memoryLimit?: string;
  cpuLimit?: string;
  memoryRequest?: string;
  cpuRequest?: string;
}

/** GOMEMLIMIT as a share of limits.memory (Prometheus's --auto-gomemlimit.ratio default). */
export const GOMEMLIMIT_RATIO = 0.9;

const value = (quantity: string | undefined): number | undefined => (quantity ? quantityValue(quantity) : undefined);

/** The hard memory limit in bytes, or undefined for none. */
export function memoryLimitBytes(resources: ProcessResources): number | undefined {
  const bytes = value(resources.memoryLimit);
  return bytes && bytes > 0 ? Math.floor(bytes) : undefined;
}

/** The environment Prometheus starts with: `base` with GOMEMLIMIT and GOMAXPROCS from the limits. */
export function prometheusEnv(resources: ProcessResources, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = { ...base };
  const memory = memoryLimitBytes(resources);
  if (memory) env.GOMEMLIMIT = String(Math.floor(memory * GOMEMLIMIT_RATIO));
  const cpu = value(resources.cpuLimit);
  if (cpu && cpu > 0) env.GOMAXPROCS = String(Math.max(1, Math.ceil(cpu - 1e-9)));
  return env;
}

export interface MachineCapacity {
  cores: number;
  memoryBytes: number;
}

export const machineCapacity = (): MachineCapacity => ({ cores: availableParallelism(), memoryBytes: totalmem() });

/** Why the requests do not fit this machine (the scheduler's "Insufficient cpu"), or undefined when they do. */
export function insufficientResources(
  resources: ProcessResources,
  machine: MachineCapacity = machineCapacity(),
): string | undefined {
  const cpu = value(resources.cpuRequest) ?? 0;
  const memory = value(resources.memoryRequest) ?? 0;
  const short: string[] = [];
  if (cpu > machine.cores) short.push(`cpu (requests ${resources.cpuRequest}, the machine has ${machine.cores} cores)`);
  if (memory > machine.memoryBytes) {
    short.push(`memory (requests ${resources.memoryRequest}, the machine has ${machine.memoryBytes} bytes)`);
  }
  return short.length ? `Insufficient ${short.join(" and ")}: prometheus not started` : undefined;
}

/** Anonymous resident memory of a process (RssAnon of /proc/<pid>/status), in bytes; undefined once it is gone. */
export async function anonymousRssBytes(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => undefined);
  const kib = status && /^RssAnon:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  return kib ? Number(kib) * 1024 : undefined;
}
