// A small informer over the key-value storage: reads the keys under some prefixes at one revision, then follows
// every write through one watch on the whole keyspace. Watching everything (and ignoring what it does not want)
// means it knows the newest revision it has applied, so `fresh()` can wait until every write committed before a
// request is visible: an access key disabled by one request is refused on the very next one.

import type { KeyValueStore, StoredRecord, WatchEvent, Watcher } from "../storage/types.ts";

export interface InformerHandler {
  /** Keys under these prefixes are listed at start and delivered as events. */
  readonly prefixes: readonly string[];
  /** Replaces the whole state (at start and after a re-list). */
  reset(records: StoredRecord[]): void;
  /** One write under a prefix, in revision order. */
  apply(event: WatchEvent): void;
}

const CAUGHT_UP: Promise<void> = Promise.resolve();

interface Waiter {
  revision: number;
  resolve: () => void;
}

export class StoreInformer {
  private readonly storage: KeyValueStore;
  private readonly handler: InformerHandler;
  private readonly onError: (error: unknown) => void;
  private watcher?: Watcher;
  private applied = 0;
  private waiters: Waiter[] = [];
  private stopped = false;

  constructor(storage: KeyValueStore, handler: InformerHandler, onError: (error: unknown) => void = () => {}) {
    this.storage = storage;
    this.handler = handler;
    this.onError = onError;
  }

  /** Lists and starts watching; resolves once the initial state is loaded. */
  async start(): Promise<void> {
    const revision = await this.storage.currentRevision();
    const records: StoredRecord[] = [];
    for (const prefix of this.handler.prefixes) {
      records.push(...(await this.storage.list({ prefix, revision })).records);
    }
    if (this.stopped) return;
    this.handler.reset(records);
    this.advance(revision);
    this.watcher = this.storage.watch({
      prefix: "/",
      afterRevision: revision,
      onEvents: (events) => {
        for (const event of events) {
          if (this.handler.prefixes.some((prefix) => event.record.key.startsWith(prefix))) {
            try {
              this.handler.apply(event);
            } catch (error) {
              this.onError(error);
            }
          }
        }
        if (events.length) this.advance(events[events.length - 1].record.revision);
        return true;
      },
      onClose: (reason) => {
        this.watcher = undefined;
        if (this.stopped || reason.kind === "closed") {
          this.release();
          return;
        }
        // Cut off (slow) or behind compaction: start over from a fresh list.
        this.start().catch((error) => {
          this.onError(error);
          this.release();
        });
      },
    });
  }

  /** Resolves once every write committed before this call has been applied. */
  fresh(): Promise<void> {
    // The common case, once per request: already caught up, known without asking the storage asynchronously.
    let now: number | undefined;
    try {
      now = this.storage.revisionNow?.();
    } catch {
      // A closed store: let currentRevision() reject, as callers expect of a promise.
    }
    if (now !== undefined && (now <= this.applied || this.stopped)) return CAUGHT_UP;
    return this.storage.currentRevision().then((current) => {
      if (current <= this.applied || this.stopped) return;
      return new Promise<void>((resolve) => this.waiters.push({ revision: current, resolve }));
    });
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.release();
  }

  private advance(revision: number): void {
    this.applied = Math.max(this.applied, revision);
    if (this.waiters.length === 0) return;
    const waiting: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.revision <= this.applied) waiter.resolve();
      else waiting.push(waiter);
    }
    this.waiters = waiting;
  }

  /** Nobody waits forever on a stopped informer. */
  private release(): void {
    for (const waiter of this.waiters) waiter.resolve();
    this.waiters = [];
  }
}
