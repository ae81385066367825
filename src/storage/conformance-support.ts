// Helpers for the conformance suite: open/close around a test, capture StorageErrors, and record a watch.

import assert from "node:assert/strict";
import { type KeyValueStore, StorageError, type WatchCloseReason, type WatchEvent, type Watcher } from "./types.ts";

export type OpenStore = () => Promise<KeyValueStore>;

/** Opens a store, runs `body`, and always closes it. */
export async function withStore(open: OpenStore, body: (store: KeyValueStore) => Promise<void>): Promise<void> {
  const store = await open();
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

/** Awaits a promise that must fail with a StorageError of `code`, and returns the error. */
export async function storageError(
  promise: Promise<unknown>,
  code: StorageError["storageCode"],
): Promise<StorageError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof StorageError, `expected StorageError ${code}, got ${String(error)}`);
    assert.equal(error.storageCode, code);
    return error;
  }
  assert.fail(`expected StorageError ${code}, but the call succeeded`);
}

/** Resolves after the event loop has turned `turns` times (lets asynchronous delivery happen; never a wall clock). */
export async function turns(count = 3): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

export interface RecordOptions {
  prefix: string;
  afterRevision: number;
  /** onEvents returns false once this many events arrived (pause), until resume(). */
  pauseAfter?: number;
}

/** A watch that records every batch and its close reason, and lets tests await a condition. */
export class WatchRecording {
  readonly batches: WatchEvent[][] = [];
  readonly closes: WatchCloseReason[] = [];
  readonly watcher: Watcher;
  private waiters: { check: () => boolean; resolve: () => void }[] = [];
  private pauseAfter?: number;

  constructor(store: KeyValueStore, options: RecordOptions) {
    this.pauseAfter = options.pauseAfter;
    this.watcher = store.watch({
      prefix: options.prefix,
      afterRevision: options.afterRevision,
      onEvents: (events) => {
        this.batches.push(events);
        this.notify();
        return this.pauseAfter === undefined || this.events.length < this.pauseAfter;
      },
      onClose: (reason) => {
        this.closes.push(reason);
        this.notify();
      },
    });
  }

  get events(): WatchEvent[] {
    return this.batches.flat();
  }

  get revisions(): number[] {
    return this.events.map((event) => event.record.revision);
  }

  /** Resolves once `check` holds (checked after every batch and close). */
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  /** Resolves once an event at `revision` or later was delivered. */
  untilRevision(revision: number): Promise<void> {
    return this.until(() => this.batches.some((batch) => batch.some((event) => event.record.revision >= revision)));
  }

  untilClosed(): Promise<WatchCloseReason> {
    return this.until(() => this.closes.length > 0).then(() => this.closes[0]);
  }

  resume(): void {
    this.pauseAfter = undefined;
    this.watcher.resume();
  }

  private notify(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const waiter of waiting) {
      if (waiter.check()) waiter.resolve();
      else this.waiters.push(waiter);
    }
  }
}
