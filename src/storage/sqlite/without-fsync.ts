// Housekeeping writes (compaction's deletes, vacuum steps) need no fsync of their own: losing one to a power cut
// only leaves work for the next run, and the next durable commit's fsync of the WAL covers every frame before it.
// Skipping it keeps such a step down to its own work instead of a disk flush (several ms on a busy disk), which is
// what a commit queued behind the step waits for.

import type { DatabaseSync } from "node:sqlite";

/** Runs `step` (one or more whole transactions) with synchronous=NORMAL, then puts the connection's mode back. */
export function withoutFsync<T>(db: DatabaseSync, step: () => T): T {
  const mode = Number(Object.values(db.prepare("PRAGMA synchronous").get() ?? {})[0] ?? 2);
  if (mode <= 1) return step(); // OFF or NORMAL already
  db.exec("PRAGMA synchronous = NORMAL");
  try {
    return step();
  } finally {
    db.exec(`PRAGMA synchronous = ${mode}`);
  }
}
