// Automatic compaction, on the leader (leader.ts): every interval (default 1 minute) the store is compacted to the
// newest revision at least the retention (default 5 minutes) old (src/storage/retention-compaction.ts), so a watch
// or paged list can resume from anything newer than the retention, and history never piles up. On SQLite the store
// then returns the freed pages by itself (incremental vacuum); on etcd each compaction first takes the cluster-wide
// turn (etcd-compaction-turn.ts) as kube-apiserver's compactor does, and defrag-task.ts returns the space.

import type { Logger } from "pino";
import { type CompactionRun, RetentionCompaction } from "../storage/retention-compaction.ts";
import type { KeyValueStore } from "../storage/types.ts";
import type { LeaderTask } from "./leader.ts";

export const DEFAULT_COMPACTION_INTERVAL_MS = 60 * 1000;
export const DEFAULT_COMPACTION_RETENTION_MS = 5 * 60 * 1000;

export interface CompactionTaskOptions {
  storage: KeyValueStore;
  /** How often (default 1 minute). */
  intervalMs?: number;
  /** History kept readable (default 5 minutes). */
  retentionMs?: number;
  /** etcd: the coordinated turn (EtcdCompactionTurn.take). */
  takeTurn?(target: number): Promise<boolean>;
  /** Hears of every compaction made. */
  onCompacted?(run: CompactionRun): void;
  logger?: Logger;
}

export function compactionTask(options: CompactionTaskOptions): LeaderTask {
  let timer: NodeJS.Timeout | undefined;
  // A new term starts sampling afresh: its first compaction comes one retention after it began to lead.
  const compaction = new RetentionCompaction({
    storage: options.storage,
    retentionMs: options.retentionMs ?? DEFAULT_COMPACTION_RETENTION_MS,
    takeTurn: options.takeTurn,
  });
  let running = false;
  const tick = async () => {
    if (running) return; // a slow compaction (a large backlog) is not started twice
    running = true;
    try {
      const run = await compaction.tick();
      if (run) options.onCompacted?.(run);
    } finally {
      running = false;
    }
  };
  return {
    name: "compaction",
    start() {
      const every = options.intervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS;
      const beat = () => tick().catch((error) => options.logger?.warn({ err: String(error) }, "compaction failed"));
      beat();
      timer = setInterval(beat, every);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
