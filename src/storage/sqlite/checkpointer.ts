// WAL checkpoints on our schedule instead of SQLite's automatic one. The automatic checkpoint runs inside the
// COMMIT that pushes the WAL past 1,000 pages: the whole group-commit batch waits for it, and with writes spread over
// many index pages it runs every few commits, copying the same hot pages again each time. Here a PASSIVE checkpoint
// runs in its own macrotask a while after writes (never inside a commit), and copies each page once per interval.
// Durability does not depend on it: a committed transaction is in the fsynced WAL either way.
// A checkpoint leaves the WAL file at its size (up to journal_size_limit) for the next writes to reuse; once writes
// have paused for a while, a TRUNCATE checkpoint gives that space back too.

import type { DatabaseSync } from "node:sqlite";

export interface CheckpointerOptions {
  db: DatabaseSync;
  /** Delay from the first commit after a checkpoint to the next checkpoint. */
  intervalMs: number;
  /** Written rows after which the checkpoint runs at the next turn rather than waiting for the interval. */
  maxRows: number;
  /** Quiet time after a checkpoint before the WAL file is truncated to zero (0 or absent: never). */
  truncateAfterIdleMs?: number;
  /** After each checkpoint that ran (the database file may have grown, the WAL may be empty). */
  onCheckpoint?(): void;
}

export class Checkpointer {
  private readonly options: CheckpointerOptions;
  private timer?: NodeJS.Timeout;
  private immediate?: NodeJS.Immediate;
  private idle?: NodeJS.Timeout;
  private rows = 0;
  private closed = false;

  constructor(options: CheckpointerOptions) {
    this.options = options;
    options.db.exec("PRAGMA wal_autocheckpoint = 0");
  }

  /** Called after every COMMIT with the number of rows it wrote. */
  committed(rows: number): void {
    if (this.closed) return;
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    this.rows += rows;
    if (this.rows >= this.options.maxRows) {
      this.immediate ??= setImmediate(() => this.run());
      return;
    }
    if (!this.timer) {
      this.timer = setTimeout(() => this.run(), this.options.intervalMs);
      this.timer.unref();
    }
  }

  /** Checkpoints now (PASSIVE: with no other connection it copies the whole WAL); failures wait for the next one. */
  run(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    if (this.closed || this.rows === 0) return;
    this.rows = 0;
    try {
      this.options.db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch {
      // Not fatal: the WAL keeps every committed write; the next commit schedules another attempt.
      return;
    }
    this.options.onCheckpoint?.();
    if (this.options.truncateAfterIdleMs) {
      this.idle = setTimeout(() => this.truncate(), this.options.truncateAfterIdleMs);
      this.idle.unref();
    }
  }

  /** No commit since the last checkpoint: the WAL holds nothing the database lacks, so it can be emptied. */
  private truncate(): void {
    this.idle = undefined;
    if (this.closed || this.rows > 0 || !this.options.db.isOpen) return;
    try {
      this.options.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // Not fatal: the file keeps its size until the next quiet period.
      return;
    }
    this.options.onCheckpoint?.();
  }

  /** Stops scheduling (SQLite checkpoints the WAL itself when the connection closes). */
  close(): void {
    this.closed = true;
    if (this.idle) clearTimeout(this.idle);
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
  }
}
