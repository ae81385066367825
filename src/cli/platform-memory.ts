// The platform process's memory settings (issue 36), like the runtime's (runtime-node-flags.ts, heap-compactor.ts):
// - V8 grows the young generation under load to 3 × 32 MiB and keeps it (measured: 107 MiB of new space resident
//   after a GET run, 38 MiB of it used). Capped at 8 MiB semi-spaces, scavenges run more often but each copies as
//   little (what a request allocates dies with it), for the same CPU per request in bench/run.ts.
// - glibc malloc: one arena and fixed thresholds (runtimeEnvironment()), so memory freed after a burst goes back.
// - Node's compile cache off for the built JavaScript (runtimeEnvironment()): an installed copy idled at 95.3 MiB with
//   it, 91.4 without.
// - After a burst of work the heap V8 grew into stays committed while the process sits idle: once work stops, one
//   full compacting collection gives it back (HeapCompactor), as the runtime does.

import { exposedGc, HeapCompactor } from "../virtualcluster/heap-compactor.ts";

export const PLATFORM_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=8", "--expose-gc"];

/** CPU a process uses in one look (5 s) to count as working: above an idle platform's timers, below any load. */
const BURST_CPU_MS = 100;

/** Starts giving the heap back after bursts of work (a no-op without --expose-gc); returns how to stop. */
export function releaseMemoryAfterBursts(): () => void {
  const gc = exposedGc();
  if (!gc) return () => {};
  const compactor = new HeapCompactor({ gc, work: cpuBursts() });
  compactor.start();
  return () => compactor.stop();
}

const processCpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/**
 * A count for HeapCompactor.work(): it goes up on each call (one per look) for which the process used more than
 * `thresholdMs` of CPU since the previous call, so an idle platform's timers never count as work.
 */
export function cpuBursts(cpuMs: () => number = processCpuMs, thresholdMs = BURST_CPU_MS): () => number {
  let last = cpuMs();
  let bursts = 0;
  return () => {
    const now = cpuMs();
    if (now - last > thresholdMs) bursts++;
    last = now;
    return bursts;
  };
}
