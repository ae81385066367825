// The in-process watch hub: the append path publishes each committed transaction's events here, and the hub fans
// them out to watchers by prefix. A watcher that starts behind the newest revision first pages through the log
// (history) and joins the live fan-out in the same synchronous step as its last read, so the history/live boundary
// has no gap and no duplicate. Delivery always happens in a later macrotask, never in a writer's call stack, and
// writers never wait: a watcher whose queue passes its buffer limit is cut off with reason "slow".

import type { WatchCloseReason, WatchEvent, Watcher, WatchOptions } from "./types.ts";

/** What the hub needs from a backend: the committed revision and the log. */
export interface WatchSource {
  /** Newest committed revision. */
  revision(): number;
  compactedRevision(): number;
  /**
   * Up to `limit` committed events with revision > `afterRevision` under `prefix`, in revision order. A source that
   * keeps only recent events (etcd's) answers undefined once they are gone: the watcher is cut off as "slow".
   */
  history(prefix: string, afterRevision: number, limit: number): WatchEvent[] | undefined;
}

export interface WatchHubOptions {
  source: WatchSource;
  /** Events a watcher may have queued before it is cut off as slow. */
  bufferLimit: number;
  /** Events read from the log per macrotask while a watcher catches up (capped by bufferLimit). */
  historyPageSize?: number;
  /**
   * Roughly how many queued events one macrotask delivers (default 200). A fan-out to many watchers is delivered
   * in slices with I/O in between, so requests (writes) are not stuck behind it; each watcher still receives its
   * events in order, as whole batches.
   */
  deliverySlice?: number;
}

type State = "history" | "live" | "ending" | "done";

class Subscription implements Watcher {
  readonly options: WatchOptions;
  state: State = "live";
  /** Every event up to this revision has been queued or delivered (or, while in history, read). */
  position = 0;
  queue: WatchEvent[][] = [];
  queued = 0;
  paused = false;
  ending?: WatchCloseReason;
  private readonly hub: WatchHub;

  constructor(hub: WatchHub, options: WatchOptions) {
    this.hub = hub;
    this.options = options;
  }

  resume(): void {
    if (!this.paused || this.state === "ending" || this.state === "done") return;
    this.paused = false;
    this.hub.wake(this);
  }

  close(): void {
    this.hub.finish(this, this.ending ?? { kind: "closed" });
  }
}

export class WatchHub {
  private readonly source: WatchSource;
  private readonly bufferLimit: number;
  private readonly pageSize: number;
  private readonly deliverySlice: number;
  /** Live watchers grouped by prefix: one startsWith per prefix and event, however many watchers share it. */
  private readonly live = new Map<string, Set<Subscription>>();
  private readonly all = new Set<Subscription>();
  private readonly ready = new Set<Subscription>();
  private scheduled = false;
  private closed = false;

  constructor(options: WatchHubOptions) {
    this.source = options.source;
    this.bufferLimit = Math.max(1, options.bufferLimit);
    this.pageSize = Math.max(1, Math.min(options.historyPageSize ?? 1000, this.bufferLimit));
    this.deliverySlice = Math.max(1, options.deliverySlice ?? 200);
  }

  /** Watchers not yet finished (for tests and metrics). */
  get size(): number {
    return this.all.size;
  }

  watch(options: WatchOptions): Watcher {
    const sub = new Subscription(this, options);
    this.all.add(sub);
    if (this.closed) {
      this.end(sub, { kind: "closed" });
      return sub;
    }
    const after = options.afterRevision;
    const compacted = this.source.compactedRevision();
    const current = this.source.revision();
    if (after > 0 && after < compacted) {
      this.end(sub, { kind: "compacted", compactedRevision: compacted, requestedRevision: after });
    } else if (after <= 0 || after >= current) {
      sub.position = after > 0 ? after : current;
      this.goLive(sub);
    } else {
      sub.state = "history";
      sub.position = after;
      this.wake(sub);
    }
    return sub;
  }

  /** Called by the append path right after COMMIT, with that transaction's events in revision order. */
  publish(events: WatchEvent[]): void {
    if (events.length === 0) return;
    for (const [prefix, subs] of this.live) {
      const matching = prefix === "" ? events : events.filter((event) => event.record.key.startsWith(prefix));
      if (matching.length === 0) continue;
      for (const sub of subs) this.enqueue(sub, matching);
    }
  }

  /** Ends every watch with `reason` (they re-list) while the hub stays open: the source lost its place. */
  endAll(reason: WatchCloseReason): void {
    for (const sub of this.all) if (sub.state !== "ending" && sub.state !== "done") this.end(sub, reason);
  }

  /** Ends every watch with reason "closed" (a pending "slow" or "compacted" is reported instead). */
  close(): void {
    this.closed = true;
    for (const sub of this.all) this.finish(sub, sub.ending ?? { kind: "closed" });
    this.ready.clear();
  }

  wake(sub: Subscription): void {
    this.ready.add(sub);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.run());
  }

  /** Detaches the watcher and calls onClose exactly once, now. */
  finish(sub: Subscription, reason: WatchCloseReason): void {
    if (sub.state === "done") return;
    this.detach(sub);
    sub.state = "done";
    this.all.delete(sub);
    try {
      sub.options.onClose(reason);
    } catch (error) {
      process.emitWarning(`watch onClose threw: ${String(error)}`);
    }
  }

  private enqueue(sub: Subscription, events: WatchEvent[]): void {
    let batch = events;
    if (batch[batch.length - 1].record.revision <= sub.position) return;
    // Only a watcher that started at a future revision can see a batch straddling its position.
    if (batch[0].record.revision <= sub.position) batch = batch.filter((e) => e.record.revision > sub.position);
    sub.position = batch[batch.length - 1].record.revision;
    // A batch landing in an empty queue is always taken: a watcher that keeps up is never cut off by a big commit.
    if (sub.queued > 0 && sub.queued + batch.length > this.bufferLimit) {
      this.end(sub, { kind: "slow" });
      return;
    }
    sub.queue.push(batch);
    sub.queued += batch.length;
    if (!sub.paused) this.wake(sub);
  }

  /** Detaches now and reports the reason in a later macrotask (never inside a writer's or caller's stack). */
  private end(sub: Subscription, reason: WatchCloseReason): void {
    this.detach(sub);
    sub.state = "ending";
    sub.ending = reason;
    this.wake(sub);
  }

  private detach(sub: Subscription): void {
    if (sub.state === "live") {
      const group = this.live.get(sub.options.prefix);
      group?.delete(sub);
      if (group?.size === 0) this.live.delete(sub.options.prefix);
    }
    sub.queue = [];
    sub.queued = 0;
  }

  private goLive(sub: Subscription): void {
    sub.state = "live";
    let group = this.live.get(sub.options.prefix);
    if (!group) {
      group = new Set();
      this.live.set(sub.options.prefix, group);
    }
    group.add(sub);
  }

  /** Pumps the watchers that were ready first, up to about one slice of events; the rest in the next macrotask. */
  private run(): void {
    this.scheduled = false;
    const subs: Subscription[] = [];
    let budget = this.deliverySlice;
    for (const sub of this.ready) {
      subs.push(sub);
      budget -= Math.max(1, sub.queued);
      if (budget <= 0) break;
    }
    for (const sub of subs) this.ready.delete(sub);
    for (const sub of subs) this.pump(sub);
    if (this.ready.size > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.run());
    }
  }

  private pump(sub: Subscription): void {
    if (sub.state === "ending") {
      this.finish(sub, sub.ending ?? { kind: "closed" });
      return;
    }
    if (sub.state === "history" && !sub.paused && sub.queued === 0) this.readPage(sub);
    while (!sub.paused && sub.queue.length > 0 && (sub.state === "live" || sub.state === "history")) {
      const batch = sub.queue.shift()!;
      sub.queued -= batch.length;
      this.deliver(sub, batch);
    }
    // Delivery may have changed the state (the consumer can close or pause from inside onEvents).
    const state = sub.state as State;
    // One history page per macrotask, so a watcher far behind does not hold up writers.
    if (state === "ending" || (state === "history" && !sub.paused)) this.wake(sub);
  }

  private readPage(sub: Subscription): void {
    const compacted = this.source.compactedRevision();
    if (sub.position < compacted) {
      this.end(sub, { kind: "compacted", compactedRevision: compacted, requestedRevision: sub.position });
      return;
    }
    const events = this.source.history(sub.options.prefix, sub.position, this.pageSize);
    if (events === undefined) {
      this.end(sub, { kind: "slow" });
      return;
    }
    if (events.length > 0) {
      sub.queue.push(events);
      sub.queued += events.length;
      sub.position = events[events.length - 1].record.revision;
    }
    if (events.length < this.pageSize) {
      // The read reached the end of the log; nothing can commit before this synchronous step ends.
      sub.position = Math.max(sub.position, this.source.revision());
      this.goLive(sub);
    }
  }

  private deliver(sub: Subscription, batch: WatchEvent[]): void {
    let more: boolean | undefined;
    try {
      more = sub.options.onEvents(batch);
    } catch (error) {
      process.emitWarning(`watch onEvents threw, closing the watch: ${String(error)}`);
      this.finish(sub, { kind: "closed" });
      return;
    }
    if (more === false) sub.paused = true;
  }
}
