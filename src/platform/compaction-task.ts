// Compaction of an etcd store, as kube-apiserver does it: every interval the leader compacts to the revision it saw
// one interval earlier, so a watch or paged list may resume from anything newer than one interval (5 minutes).

import type { Logger } from "pino";
import type { KeyValueStore } from "../storage/types.ts";
import type { LeaderTask } from "./leader.ts";

export const COMPACTION_INTERVAL_MS = 5 * 60 * 1000;

export function compactionTask(options: { storage: KeyValueStore; intervalMs?: number; logger?: Logger }): LeaderTask {
  let timer: NodeJS.Timeout | undefined;
  let previous = 0;
  const tick = async () => {
    const current = await options.storage.currentRevision();
    if (previous > 0) await options.storage.compact(current - previous);
    previous = current;
  };
  return {
    name: "compaction",
    start() {
      timer = setInterval(() => {
        tick().catch((error) => options.logger?.warn({ err: String(error) }, "compaction failed"));
      }, options.intervalMs ?? COMPACTION_INTERVAL_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
