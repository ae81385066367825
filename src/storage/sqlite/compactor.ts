// Compaction: makes revisions at or before a target unreadable and deletes the rows only they could see — rows
// superseded by a write at or before the target, and tombstones that old. The target is recorded first (reads and
// watches below it fail with Compacted from then on); rows are then deleted in chunks, one short transaction per
// macrotask, so writers keep committing. The cleaned-up-to revision is stored too, so a crash only delays cleanup.
// A chunk's size adapts so its transaction stays within a time budget (deleting a row also zeroes it: secure_delete),
// and chunks skip the fsync (a lost chunk is redone by the next run; see without-fsync.ts).

import type { DatabaseSync } from "node:sqlite";
import type { Pacer } from "./pacer.ts";
import type { Statements } from "./statements.ts";
import { withoutFsync } from "./without-fsync.ts";

const COMPACTED = "compacted_revision";
const CLEANED = "cleaned_revision";
/** Bounds of the revisions whose superseded rows are deleted per transaction. */
const MIN_CHUNK = 50;
const MAX_CHUNK = 5000;
/** Revisions left to clean up past which chunks stop yielding to writes (pacer.ts) and run every turn. */
const CATCH_UP_REVISIONS = 20_000;

export interface CompactorOptions {
  /** When the next cleanup transaction may run (none: the next macrotask). */
  pacer?: Pacer;
  /** Longest a cleanup transaction should hold the connection (default 4 ms). */
  chunkBudgetMs?: number;
  /** After each cleanup transaction, with the rows it deleted (the checkpointer counts them). */
  onChunk?(rows: number): void;
}

export class Compactor {
  /** The oldest readable revision. */
  compacted: number;
  private cleaned: number;
  private running: Promise<unknown> = Promise.resolve();
  private readonly db: DatabaseSync;
  private readonly statements: Statements;
  private readonly options: CompactorOptions;
  private chunk = 500;

  constructor(db: DatabaseSync, statements: Statements, options: CompactorOptions = {}) {
    this.db = db;
    this.statements = statements;
    this.options = options;
    this.compacted = readMeta(statements, COMPACTED);
    this.cleaned = readMeta(statements, CLEANED);
  }

  /** Compacts up to `target` (never backwards) and resolves to the compacted revision. Calls run one at a time. */
  compact(target: number): Promise<number> {
    const run = this.running.then(() => this.run(target));
    this.running = run.catch(() => {});
    return run;
  }

  private async run(target: number): Promise<number> {
    if (!this.db.isOpen) return this.compacted;
    if (target > this.compacted) {
      this.statements.writeMeta.run(COMPACTED, target);
      this.compacted = target;
    }
    while (this.cleaned < this.compacted && this.db.isOpen) {
      const from = this.cleaned;
      const to = Math.min(from + this.chunk, this.compacted);
      const started = performance.now();
      const rows = withoutFsync(this.db, () => this.clean(from, to));
      this.adapt(to - from, performance.now() - started);
      this.options.onChunk?.(rows);
      if (to < this.compacted) {
        // Far behind (a sustained burst of writes), cleanup takes every turn again rather than let the file grow.
        const paced = this.options.pacer && this.compacted - this.cleaned < CATCH_UP_REVISIONS;
        await (paced ? this.options.pacer!.wait() : new Promise((resolve) => setImmediate(resolve)));
      }
    }
    return this.compacted;
  }

  /** Deletes what revisions (from, to] made unreadable, in one transaction; returns the rows deleted. */
  private clean(from: number, to: number): number {
    const s = this.statements;
    let rows = 0;
    s.begin.run();
    try {
      rows += Number(s.compactSuperseded.run(from, to).changes);
      rows += Number(s.compactTombstones.run(from, to).changes);
      s.writeMeta.run(CLEANED, to);
      s.commit.run();
    } catch (error) {
      if (this.db.isTransaction) s.rollback.run();
      throw error;
    }
    this.cleaned = to;
    return rows;
  }

  /** Sizes the next chunk for 80% of the budget from this one's revisions per millisecond (grows at most 2x). */
  private adapt(revisions: number, took: number): void {
    const target = (this.options.chunkBudgetMs ?? 4) * 0.8;
    const next = took <= 0.01 ? revisions * 2 : Math.floor((revisions / took) * target);
    this.chunk = Math.max(MIN_CHUNK, Math.min(MAX_CHUNK, next, Math.max(revisions, MIN_CHUNK) * 2));
  }
}

function readMeta(statements: Statements, name: string): number {
  const row = statements.readMeta.get(name) as [number] | undefined;
  return row ? row[0] : 0;
}
