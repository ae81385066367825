// The newest watch events one replica has seen, kept in memory so a watch that starts a little in the past (a
// client's list, then its watch) is served from here, as SQLite serves it from its log, instead of opening an etcd
// watch of its own. Only events newer than `floor` are all here; older starts need etcd.

import type { WatchEvent } from "../types.ts";

export class EventWindow {
  private events: WatchEvent[] = [];
  private start = 0;
  private readonly capacity: number;
  /** Every event with a revision above this one is in the window (until evicted). */
  floor: number;

  constructor(options: { capacity: number; floor: number }) {
    this.capacity = Math.max(1, options.capacity);
    this.floor = options.floor;
  }

  get size(): number {
    return this.events.length - this.start;
  }

  /** Appends events in revision order, evicting the oldest past the capacity. */
  append(events: WatchEvent[]): void {
    for (const event of events) this.events.push(event);
    const excess = this.size - this.capacity;
    if (excess > 0) {
      this.floor = this.events[this.start + excess - 1].record.revision;
      this.start += excess;
      // Drop the evicted slots now and then, not on every append.
      if (this.start > this.capacity) {
        this.events = this.events.slice(this.start);
        this.start = 0;
      }
    }
  }

  /** Forgets everything: events after `floor` will be appended anew. */
  reset(floor: number): void {
    this.events = [];
    this.start = 0;
    this.floor = floor;
  }

  /**
   * Up to `limit` events with revision > `after` under `prefix`, in order; undefined when events after `after`
   * are no longer (or not yet) in the window.
   */
  after(prefix: string, after: number, limit: number): WatchEvent[] | undefined {
    if (after < this.floor) return undefined;
    const found: WatchEvent[] = [];
    for (let i = this.firstAfter(after); i < this.events.length && found.length < limit; i++) {
      const event = this.events[i];
      if (event.record.key.startsWith(prefix)) found.push(event);
    }
    return found;
  }

  /** The newest revision at or below `revision` at which a key in the window changed, or the floor. */
  lastChangeAtOrBelow(revision: number): number {
    const index = this.firstAfter(revision) - 1;
    return index >= this.start ? this.events[index].record.revision : Math.min(this.floor, revision);
  }

  /** Index of the first event with a revision above `revision` (binary search). */
  private firstAfter(revision: number): number {
    let low = this.start;
    let high = this.events.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.events[mid].record.revision <= revision) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
