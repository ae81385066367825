// Writes audit events to the datastore in batches, in the background: events wait in a bounded spool and one
// append at a time takes what has gathered. When the datastore fails (unreachable, full, restarting) the batch stays
// at the front of the spool and is retried with backoff, so nothing is lost while the spool has room. Past its
// bound the newest events are dropped and counted: the audit log file still has them.

import { setTimeout as sleep } from "node:timers/promises";
import { auditEventFields } from "./event-fields.ts";
import type { AuditEventRow, AuditStore } from "./types.ts";

export const DEFAULT_MAX_SPOOLED_EVENTS = 100_000;
export const DEFAULT_MAX_SPOOLED_BYTES = 64 * 1024 * 1024;
/**
 * Events per append (one transaction): large ones cost SQLite a fifth less CPU per row than 1,000 and commit (sync)
 * five times less often; 5,000 rows also fit one PostgreSQL statement (65,535 parameters).
 */
const MAX_BATCH_EVENTS = 5_000;
const MAX_BATCH_BYTES = 8 * 1024 * 1024;
const MAX_RETRY_DELAY_MS = 5_000;
/**
 * How long events gather before an append (unless a full batch is ready). Few large transactions cost far less CPU
 * than many small ones: each commit writes every index page it touched, and the audit ID index is touched at random.
 */
export const DEFAULT_GATHER_MS = 500;

export interface DatastoreWriterOptions {
  store: AuditStore;
  /** Events waiting for the datastore before new ones are dropped. */
  maxSpooledEvents?: number;
  /** Characters of event lines waiting before new ones are dropped. */
  maxSpooledBytes?: number;
  /** Every failed append (the owner counts and logs them). */
  onFailure?: (error: Error) => void;
  /** The first append that succeeded after failures. */
  onRecovered?: () => void;
  /** Events dropped: spool full, unreadable line, or still spooled at close. */
  onDropped?: (count: number, reason: "spool-full" | "unreadable" | "closed") => void;
  onWritten?: (count: number) => void;
  /** First retry delay after a failure (doubles up to 5 s). Default 100 ms. */
  retryDelayMs?: number;
  /** How long events gather before an append; flush() does not wait. Default DEFAULT_GATHER_MS. */
  gatherMs?: number;
}

export class DatastoreWriter {
  private readonly options: DatastoreWriterOptions;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private spool: AuditEventRow[] = [];
  private bytes = 0;
  private pumping: Promise<void> | undefined;
  private failing = false;
  private retryDelay = 0;
  private closed = false;
  private readonly stopping = new AbortController();
  /** Resolved after the next append attempt that empties the spool or fails. */
  private waiters: (() => void)[] = [];
  private gathering: NodeJS.Timeout | undefined;

  constructor(options: DatastoreWriterOptions) {
    this.options = options;
    this.maxEvents = options.maxSpooledEvents ?? DEFAULT_MAX_SPOOLED_EVENTS;
    this.maxBytes = options.maxSpooledBytes ?? DEFAULT_MAX_SPOOLED_BYTES;
  }

  /** Spools event lines from `instance` ("" for the platform); `now` (ms) stands in for an unreadable time. */
  add(lines: readonly string[], instance: string, now = Date.now()): void {
    if (this.closed) {
      if (lines.length > 0) this.options.onDropped?.(lines.length, "closed");
      return;
    }
    let full = 0;
    let unreadable = 0;
    for (const line of lines) {
      if (this.spool.length >= this.maxEvents || this.bytes + line.length > this.maxBytes) {
        full++;
        continue;
      }
      let row: AuditEventRow;
      try {
        row = { ...auditEventFields(line, now), instance, line };
      } catch {
        unreadable++;
        continue;
      }
      this.spool.push(row);
      this.bytes += line.length;
    }
    if (full > 0) this.options.onDropped?.(full, "spool-full");
    if (unreadable > 0) this.options.onDropped?.(unreadable, "unreadable");
    this.schedule();
  }

  /** Events waiting for the datastore. */
  spooled(): number {
    return this.spool.length;
  }

  /** Whether the last append failed. */
  isFailing(): boolean {
    return this.failing;
  }

  /** Resolves once what is spooled now is written, or after the next failed attempt (it does not wait out an outage). */
  flush(): Promise<void> {
    if (this.spool.length === 0) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.pump();
    return done;
  }

  /** One last attempt (bounded by `timeoutMs`), then whatever is still spooled is dropped and counted. */
  async close(timeoutMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    if (!this.failing) await Promise.race([this.flush(), timedOut]);
    clearTimeout(timer);
    this.closed = true;
    clearTimeout(this.gathering);
    this.stopping.abort();
    await this.pumping;
    if (this.spool.length > 0) this.options.onDropped?.(this.spool.length, "closed");
    this.spool = [];
    this.bytes = 0;
    this.wake();
  }

  /** An append now when a batch is full or someone waits; otherwise after gathering for a while. */
  private schedule(): void {
    if (this.closed || this.pumping || this.spool.length === 0) return;
    if (this.spool.length >= MAX_BATCH_EVENTS || this.waiters.length > 0) {
      this.pump();
      return;
    }
    if (this.gathering) return;
    this.gathering = setTimeout(() => this.pump(), this.options.gatherMs ?? DEFAULT_GATHER_MS);
    this.gathering.unref();
  }

  private pump(): void {
    clearTimeout(this.gathering);
    this.gathering = undefined;
    if (this.pumping || this.closed || this.spool.length === 0) return;
    this.pumping = this.run().finally(() => {
      this.pumping = undefined;
      // Events added while the last append was finishing.
      if (this.spool.length > 0 && !this.closed) this.schedule();
      else this.wake();
    });
  }

  private async run(): Promise<void> {
    while (this.spool.length > 0 && !this.closed) {
      let count = 0;
      let bytes = 0;
      while (count < this.spool.length && count < MAX_BATCH_EVENTS && bytes < MAX_BATCH_BYTES) {
        bytes += this.spool[count].line.length;
        count++;
      }
      const batch = this.spool.slice(0, count);
      try {
        await this.options.store.append(batch);
      } catch (error) {
        this.failing = true;
        this.options.onFailure?.(error as Error);
        this.wake();
        this.retryDelay = Math.min(
          this.retryDelay ? this.retryDelay * 2 : (this.options.retryDelayMs ?? 100),
          MAX_RETRY_DELAY_MS,
        );
        await sleep(this.retryDelay, undefined, { ref: false, signal: this.stopping.signal }).catch(() => undefined);
        continue;
      }
      // Appends run one at a time, so the batch is still the spool's head.
      this.spool.splice(0, count);
      this.bytes -= bytes;
      this.retryDelay = 0;
      if (this.failing) {
        this.failing = false;
        this.options.onRecovered?.();
      }
      this.options.onWritten?.(count);
    }
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
