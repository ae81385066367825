// The newest committed record of recently read keys, so get() of a hot key skips SQLite. Filled by get() and kept
// exact by the commit path (an update replaces a cached key's record, a delete drops it) in the same synchronous
// step as COMMIT, so a read never sees a version older than the last committed one. Bounded by value bytes
// (oldest entry out first).

import type { StoredRecord } from "../types.ts";

/** Rough per-entry cost beyond the value text (key, Map slot, record object). */
const ENTRY_OVERHEAD = 96;

export class LatestCache {
  readonly maxBytes: number;
  private readonly entries = new Map<string, StoredRecord>();
  private bytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = Math.max(0, maxBytes);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): StoredRecord | undefined {
    return this.entries.get(key);
  }

  /** Caches a record read from the database (the key's newest committed version). */
  remember(record: StoredRecord): void {
    const cost = costOf(record);
    if (cost > this.maxBytes) return;
    this.forget(record.key);
    this.entries.set(record.key, record);
    this.bytes += cost;
    for (const [key, oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(key);
      this.bytes -= costOf(oldest);
    }
  }

  /** A committed update: replaces the key's record if it is cached (uncached keys stay uncached). */
  updated(record: StoredRecord): void {
    if (this.entries.has(record.key)) this.remember(record);
  }

  /** A committed delete (or anything that makes the cached version wrong). */
  forget(key: string): void {
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.entries.delete(key);
    this.bytes -= costOf(old);
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

function costOf(record: StoredRecord): number {
  return record.key.length + record.value.length + ENTRY_OVERHEAD;
}
