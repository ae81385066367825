// etcd defragmentation, on the leader: every interval (default 1 minute) the members whose free pages passed the
// policy (default: half the file and at least 16 MiB) are defragmented one at a time (EtcdMaintenance.defragment).
// With a cloud maintenance window, a defragmentation starts only inside it (it stalls the member's writes).
// `--no-etcd-defrag` leaves it to the operator (etcdctl defrag), e.g. when other tenants share the etcd cluster.

import type { Logger } from "pino";
import type { DefragPolicy, EtcdMaintenance } from "../storage/etcd/etcd-maintenance.ts";
import type { ReclaimRun } from "../storage/store-stats.ts";
import { formatBytes } from "../utils/byte-size.ts";
import type { LeaderTask } from "./leader.ts";

export const DEFAULT_DEFRAG_INTERVAL_MS = 60 * 1000;

export interface DefragTaskOptions {
  maintenance: EtcdMaintenance;
  policy: DefragPolicy;
  intervalMs?: number;
  onDefragmented?(run: ReclaimRun): void;
  /** Whether a defragmentation may start now (the maintenance window is open; default always). */
  mayRun?(): boolean;
  logger?: Logger;
}

export function defragTask(options: DefragTaskOptions): LeaderTask {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  const round = async () => {
    if (running || options.mayRun?.() === false) return;
    running = true;
    try {
      for (const run of await options.maintenance.defragment(options.policy)) {
        options.logger?.info(
          { member: run.member, durationMs: Math.round(run.durationMs), freedBytes: run.freedBytes },
          `defragmented etcd member ${run.member}: ${formatBytes(run.freedBytes)} returned`,
        );
        options.onDefragmented?.(run);
      }
    } finally {
      running = false;
    }
  };
  return {
    name: "etcd defragmentation",
    start() {
      timer = setInterval(() => {
        round().catch((error) => options.logger?.warn({ err: String(error) }, "etcd defragmentation failed"));
      }, options.intervalMs ?? DEFAULT_DEFRAG_INTERVAL_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
