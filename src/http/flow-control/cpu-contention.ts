// Whether the request thread is waiting for a CPU: the share of the last interval it spent runnable but not running,
// from /proc/thread-self/schedstat (Linux: time on a CPU, time waiting in a run queue, time slices; ns). A thread that
// is never idle is preempted by whatever else the machine runs, for whole time slices, and a request arriving then
// waits them out; flow control then rests between turns (flow-control.ts). Read at most every 100 ms, by the thread
// that asks (the request thread). Elsewhere, or unreadable: never contended.

import { readFileSync } from "node:fs";

export interface CpuContentionOptions {
  /** Share of wall time spent waiting for a CPU from which the thread counts as contended (default 0.1). */
  threshold?: number;
  /** How often the figure is renewed, ms (default 100). */
  intervalMs?: number;
  read?: () => string;
  now?: () => number;
}

/** "123 456 7" -> 456: the run-queue wait, ns; undefined when not of that form. */
export function parseRunQueueWaitNs(schedstat: string): number | undefined {
  const fields = schedstat.trim().split(/\s+/);
  const wait = Number(fields[1]);
  return fields.length >= 2 && Number.isSafeInteger(wait) && wait >= 0 ? wait : undefined;
}

/** A probe of the calling thread's CPU contention (cheap: it reads /proc once per interval at most). */
export function cpuContention(options: CpuContentionOptions = {}): () => boolean {
  const threshold = options.threshold ?? 0.1;
  const intervalMs = options.intervalMs ?? 100;
  const read = options.read ?? (() => readFileSync("/proc/thread-self/schedstat", "utf8"));
  const now = options.now ?? (() => performance.now());
  const waitNs = () => {
    try {
      return parseRunQueueWaitNs(read());
    } catch {
      return undefined;
    }
  };
  let lastWait = waitNs();
  if (lastWait === undefined) return () => false;
  let lastAt = now();
  let contended = false;
  return () => {
    const at = now();
    if (at - lastAt < intervalMs) return contended;
    const wait = waitNs();
    if (wait === undefined) return false;
    contended = (wait - (lastWait ?? wait)) / 1e6 >= threshold * (at - lastAt);
    lastWait = wait;
    lastAt = at;
    return contended;
  };
}
