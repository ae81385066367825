// Returning free pages to the file system, a few at a time. Compaction deletes rows, and their pages go to SQLite's
// freelist: reused by later writes, but the file never shrinks. With auto_vacuum = INCREMENTAL (schema.ts),
// `PRAGMA incremental_vacuum(n)` moves up to n pages from the end of the file into free slots and truncates the end.
// node:sqlite runs it on the event loop, so it runs as short steps, one per macrotask: a group commit queued
// meanwhile runs between two steps and waits at most one. Each step's page count adapts so a step stays within its
// time budget (moving a page costs more when it has many children to re-point, and on a busy disk), and while writes
// wait steps are spaced out (pacer.ts).

import type { DatabaseSync } from "node:sqlite";
import type { ReclaimRun } from "../store-stats.ts";
import { pragmaNumber } from "./auto-vacuum.ts";
import type { Pacer } from "./pacer.ts";
import { withoutFsync } from "./without-fsync.ts";

export interface VacuumOptions {
  db: DatabaseSync;
  /** When the next step may run (none: the next macrotask). */
  pacer?: Pacer;
  /** Longest a step should hold the connection (default 2 ms). */
  stepBudgetMs?: number;
  /**
   * A run starts when free pages exceed both this many bytes (default 64 KiB) or half the file (so a small store
   * shrinks too: a 36 KiB store otherwise keeps up to 64 KiB free, past twice its size) ...
   */
  minFreeBytes?: number;
  /** ... and this share of the file (default 0.1). */
  minFreeShare?: number;
  /** True while steps must wait (an online snapshot reads the connection). */
  paused?(): boolean;
  /** After each step, with the pages it wrote to the WAL (the checkpointer counts them). */
  onStep?(pages: number): void;
  /** A step failed (for example for lack of space to write the WAL): the run ends; the next check starts over. */
  onError?(error: unknown): void;
}

/**
 * Page counts per step stay within these bounds. A page at the end of the file costs nothing to drop when free and
 * up to ~10 us to move when not, so a count grown over cheap steps must not be able to make one step long.
 */
const MIN_PAGES = 8;
const MAX_PAGES = 512;

export class IncrementalVacuum {
  /** The last finished run. */
  last?: ReclaimRun;
  private readonly options: VacuumOptions;
  private readonly budgetMs: number;
  private pagesPerStep = 32;
  private run?: { at: Date; started: number; pagesBefore: number; longestStepMs: number };
  private closed = false;

  constructor(options: VacuumOptions) {
    this.options = options;
    this.budgetMs = options.stepBudgetMs ?? 2;
  }

  get running(): boolean {
    return this.run !== undefined;
  }

  /** Starts a run if enough pages are free (nothing if one is under way or the file is not incremental). */
  check(): void {
    if (this.closed || this.run || !this.options.db.isOpen) return;
    const { db } = this.options;
    if (pragmaNumber(db, "auto_vacuum") !== 2) return;
    const pageSize = pragmaNumber(db, "page_size");
    const pages = pragmaNumber(db, "page_count");
    const free = pragmaNumber(db, "freelist_count");
    const minBytes = this.options.minFreeBytes ?? 64 * 1024;
    const minShare = this.options.minFreeShare ?? 0.1;
    if (free === 0 || free < pages * minShare) return;
    if (free * pageSize < minBytes && free * 2 < pages) return;
    this.run = { at: new Date(), started: performance.now(), pagesBefore: pages, longestStepMs: 0 };
    this.schedule();
  }

  /** Stops after the current step (a run in progress ends unfinished; the next check resumes the work). */
  close(): void {
    this.closed = true;
    this.run = undefined;
  }

  private schedule(): void {
    if (this.options.pacer) void this.options.pacer.wait().then(() => this.step());
    else setImmediate(() => this.step());
  }

  private step(): void {
    const run = this.run;
    const { db } = this.options;
    if (!run || this.closed || !db.isOpen) return;
    if (this.options.paused?.()) {
      // Check again shortly rather than spin through macrotasks while a snapshot copies.
      setTimeout(() => this.schedule(), 10).unref();
      return;
    }
    // Never inside someone else's transaction (all of them begin and end within one macrotask, but be sure).
    if (db.isTransaction) {
      this.schedule();
      return;
    }
    const pages = this.pagesPerStep;
    const started = performance.now();
    try {
      withoutFsync(db, () => db.exec(`PRAGMA incremental_vacuum(${pages})`));
    } catch (error) {
      this.finish();
      this.options.onError?.(error);
      return;
    }
    const took = performance.now() - started;
    run.longestStepMs = Math.max(run.longestStepMs, took);
    this.adapt(pages, took);
    this.options.onStep?.(pages);
    if (pragmaNumber(db, "freelist_count") > 0) this.schedule();
    else this.finish();
  }

  /** Aims the next step at 80% of the budget, from the pages per millisecond this one managed. */
  private adapt(pages: number, took: number): void {
    const target = this.budgetMs * 0.8;
    const next = took <= 0.01 ? pages * 2 : Math.floor((pages / took) * target);
    // Grow slowly (a fast step may have moved only cheap pages), shrink at once.
    this.pagesPerStep = Math.max(MIN_PAGES, Math.min(MAX_PAGES, Math.min(next, pages * 2)));
  }

  private finish(): void {
    const run = this.run;
    this.run = undefined;
    if (!run || !this.options.db.isOpen) return;
    const { db } = this.options;
    const pageSize = pragmaNumber(db, "page_size");
    this.last = {
      at: run.at,
      durationMs: performance.now() - run.started,
      freedBytes: Math.max(0, run.pagesBefore - pragmaNumber(db, "page_count")) * pageSize,
      longestStepMs: run.longestStepMs,
    };
  }
}
