// Compaction: makes revisions at or before a target unreadable and deletes the rows only they could see — rows
// superseded by a write at or before the target, and tombstones that old. The target is recorded first (reads and
// watches below it fail with Compacted from then on); rows are then deleted in chunks, one short transaction per
// macrotask, so writers keep committing. The cleaned-up-to revision is stored too, so a crash only delays cleanup.

import type { DatabaseSync } from "node:sqlite";
import type { Statements } from "./statements.ts";

const COMPACTED = "compacted_revision";
const CLEANED = "cleaned_revision";
/** Revisions whose superseded rows are deleted per transaction. */
const CHUNK = 5000;

export class Compactor {
  /** The oldest readable revision. */
  compacted: number;
  private cleaned: number;
  private running: Promise<unknown> = Promise.resolve();
  private readonly db: DatabaseSync;
  private readonly statements: Statements;

  constructor(db: DatabaseSync, statements: Statements) {
    this.db = db;
    this.statements = statements;
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
      const to = Math.min(from + CHUNK, this.compacted);
      this.clean(from, to);
      if (to < this.compacted) await new Promise((resolve) => setImmediate(resolve));
    }
    return this.compacted;
  }

  private clean(from: number, to: number): void {
    const s = this.statements;
    s.begin.run();
    try {
      s.compactSuperseded.run(from, to);
      s.compactTombstones.run(from, to);
      s.writeMeta.run(CLEANED, to);
      s.commit.run();
    } catch (error) {
      if (this.db.isTransaction) s.rollback.run();
      throw error;
    }
    this.cleaned = to;
  }
}

function readMeta(statements: Statements, name: string): number {
  const row = statements.readMeta.get(name) as [number] | undefined;
  return row ? row[0] : 0;
}
