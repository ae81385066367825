// Group commit: writes requested in the same event-loop turn are appended in one transaction and made durable by
// one COMMIT (one WAL fsync with synchronous=FULL), or by the next fsync of the WAL on the thread pool (`durable`).
// Each write is checked on its own: a failed precondition rejects that write only. Promises settle after COMMIT (and
// that fsync), and the watch hub hears of the commit before any of them.

import type { DatabaseSync } from "node:sqlite";
import { StorageError, type StoredRecord, type WatchEvent } from "../types.ts";
import type { Appender, ChainRequest, WriteRequest } from "./append-log.ts";
import type { Statements } from "./statements.ts";

interface PendingWrite {
  request: WriteRequest | ChainRequest;
  resolve(result: StoredRecord | StoredRecord[]): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions {
  db: DatabaseSync;
  statements: Statements;
  log: Appender;
  /** Runs synchronously right after COMMIT with the transaction's events in revision order. */
  onCommit(events: WatchEvent[]): void;
  /** Writes per transaction; more wait for the next turn so one commit never blocks the loop for long. */
  maxBatch?: number;
  /** Turns a failed write's error (SQLite's own) into what its caller sees; runs after onCommit of the same batch. */
  mapError?(error: unknown): unknown;
  /**
   * Makes what COMMIT wrote durable (an fsync of the WAL off the event loop, see wal-sync.ts); the batch's writes
   * settle only when it resolves, and fail with its error when it rejects. Without it COMMIT itself is durable.
   */
  durable?(): Promise<void>;
}

export class GroupCommit {
  /** Newest revision made durable. */
  committedRevision: number;
  private readonly options: GroupCommitOptions;
  private readonly maxBatch: number;
  private queue: PendingWrite[] = [];
  private scheduled = false;
  /** Batches committed but not yet durable (with `durable`): close waits for them. */
  private readonly settling = new Set<Promise<void>>();

  constructor(options: GroupCommitOptions) {
    this.options = options;
    this.maxBatch = options.maxBatch ?? 1000;
    this.committedRevision = options.log.revision;
  }

  /** True while writes wait for their commit. */
  get pending(): boolean {
    return this.queue.length > 0;
  }

  submit(request: WriteRequest): Promise<StoredRecord> {
    return this.enqueue(request) as Promise<StoredRecord>;
  }

  /** Queues consecutive updates of one key; they commit with the rest of the turn, all or none. */
  submitChain(request: ChainRequest): Promise<StoredRecord[]> {
    return this.enqueue(request) as Promise<StoredRecord[]>;
  }

  private enqueue(request: WriteRequest | ChainRequest): Promise<StoredRecord | StoredRecord[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flushTurn());
      }
    });
  }

  /** Commits everything queued, synchronously (used on close). */
  flushAll(): void {
    while (this.queue.length > 0) this.commit(this.queue.splice(0, this.maxBatch));
  }

  /** Resolves once every committed batch has settled (durable or failed). */
  async settled(): Promise<void> {
    while (this.settling.size > 0) await Promise.allSettled(this.settling);
  }

  private flushTurn(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    this.commit(this.queue.splice(0, this.maxBatch));
    if (this.queue.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flushTurn());
    }
  }

  private commit(batch: PendingWrite[]): void {
    const { db, statements, log } = this.options;
    const outcomes: (StoredRecord | StoredRecord[] | { error: unknown })[] = new Array(batch.length);
    const events: WatchEvent[] = [];
    try {
      statements.begin.run();
      for (let i = 0; i < batch.length; i++) {
        try {
          const request = batch[i].request;
          if (request.type === "chain") {
            const chained = this.appendChain(request);
            outcomes[i] = chained.map((event) => event.record);
            events.push(...chained);
          } else {
            const event = log.append(request);
            outcomes[i] = event.record;
            events.push(event);
          }
        } catch (error) {
          // A failed statement is undone alone, but some errors (disk full, I/O) abort the whole transaction.
          if (!(error instanceof StorageError) && !db.isTransaction) throw error;
          outcomes[i] = { error };
        }
      }
      statements.commit.run();
    } catch (error) {
      if (db.isTransaction) {
        try {
          statements.rollback.run();
        } catch {
          // The batch already failed with the original error; a failed rollback adds nothing for the callers.
        }
      }
      log.revision = this.committedRevision;
      const failure = this.options.mapError ? this.options.mapError(error) : error;
      for (const write of batch) write.reject(failure);
      return;
    }
    this.committedRevision = log.revision;
    this.options.onCommit(events);
    if (!this.options.durable || events.length === 0) {
      this.settle(batch, outcomes);
      return;
    }
    const settling = this.options.durable().then(
      () => this.settle(batch, outcomes),
      // Committed and visible, but not known to be durable: the callers cannot be told it succeeded.
      (error: unknown) => this.settle(batch, outcomes, { error }),
    );
    this.settling.add(settling);
    void settling.finally(() => this.settling.delete(settling));
  }

  /** Settles each write with its outcome; with `notDurable`, the successful ones fail with that error instead. */
  private settle(
    batch: PendingWrite[],
    outcomes: (StoredRecord | StoredRecord[] | { error: unknown })[],
    notDurable?: { error: unknown },
  ): void {
    const mapError = (error: unknown) => (this.options.mapError ? this.options.mapError(error) : error);
    for (let i = 0; i < batch.length; i++) {
      const outcome = notDurable && !("error" in outcomes[i]) ? notDurable : outcomes[i];
      if ("error" in outcome) batch[i].reject(mapError(outcome.error));
      else batch[i].resolve(outcome);
    }
  }

  /** The rows of a chained write inside a savepoint: a failure undoes the chain's earlier rows, not the batch. */
  private appendChain(request: ChainRequest): WatchEvent[] {
    const { db, statements, log } = this.options;
    const start = log.revision;
    const events: WatchEvent[] = [];
    statements.savepoint.run();
    try {
      let expectedRevision = request.expectedRevision;
      for (const value of request.values) {
        const event = log.append({ type: "update", key: request.key, value, expectedRevision });
        events.push(event);
        expectedRevision = event.record.revision;
      }
      statements.release.run();
      return events;
    } catch (error) {
      // When SQLite rolled back the whole transaction the batch fails (the caller sees isTransaction false).
      if (db.isTransaction) {
        statements.rollbackToSavepoint.run();
        statements.release.run();
        log.revision = start;
      }
      throw error;
    }
  }
}
