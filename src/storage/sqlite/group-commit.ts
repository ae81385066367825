// Group commit: writes requested in the same event-loop turn are appended in one transaction and made durable by
// one COMMIT (one WAL fsync with synchronous=FULL). Each write is checked on its own: a failed precondition rejects
// that write only. Promises settle after COMMIT, and the watch hub hears of the commit before any of them.

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
}

export class GroupCommit {
  /** Newest revision made durable. */
  committedRevision: number;
  private readonly options: GroupCommitOptions;
  private readonly maxBatch: number;
  private queue: PendingWrite[] = [];
  private scheduled = false;

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
    for (let i = 0; i < batch.length; i++) {
      const outcome = outcomes[i];
      if ("error" in outcome)
        batch[i].reject(this.options.mapError ? this.options.mapError(outcome.error) : outcome.error);
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
