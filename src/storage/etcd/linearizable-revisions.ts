// etcd's current revision for callers that need "every write committed before I asked" (currentRevision(), and
// through it StoreInformer.fresh() on every authenticated request). Any linearizable call made after such a caller
// asked answers with a header revision at least that new: a write's transaction as well as a read. So a waiter
// takes the revision of the first answer to a linearizable call made after it asked, and a read of its own goes out
// only when no write is on its way (a replica under write load asks etcd nothing more per request) or, while writes
// are, at most once every `patienceMs` (slow writes do not hold every request up). At most one such read is in
// flight; everyone who asked before it was made shares it.

import type { EtcdHeader } from "./etcd-client.ts";

interface Waiter {
  /** Calls made before this waiter asked: only the answer to a later one will do. */
  after: number;
  resolve(revision: number): void;
  reject(error: unknown): void;
}

export interface LinearizableRevisionsOptions {
  /** A linearizable read (a range of one key, count only): its header revision is etcd's revision. */
  read(): Promise<{ header?: EtcdHeader }>;
  /** While writes are on their way, a read goes out anyway at most this often (default 50 ms). */
  patienceMs?: number;
}

export class LinearizableRevisions {
  private readonly read: () => Promise<{ header?: EtcdHeader }>;
  private readonly patienceMs: number;
  /** Linearizable calls made so far: a call's number orders it against the waiters. */
  private made = 0;
  /** Writes on their way. */
  private writes = 0;
  /** In the order they asked, so `after` never decreases along the list. */
  private waiters: Waiter[] = [];
  private reading = false;
  private checkScheduled = false;
  private impatient?: NodeJS.Timeout;
  private closedWith?: { error: unknown };

  constructor(options: LinearizableRevisionsOptions) {
    this.read = options.read;
    this.patienceMs = options.patienceMs ?? 50;
  }

  /**
   * Makes a linearizable call (a transaction, or a range at the current revision) now; its answer's header revision
   * serves every waiter that asked before. `write`: a transaction, which spares the waiters a read while under way.
   */
  async track<T>(write: boolean, send: () => Promise<T>): Promise<T> {
    const number = ++this.made;
    if (write) this.writes++;
    try {
      const answer = await send();
      const revision = Number((answer as { header?: EtcdHeader }).header?.revision ?? 0);
      if (revision > 0) this.answered(number, revision);
      return answer;
    } finally {
      if (write) {
        this.writes--;
        // A write that failed, or the last one, leaves the newer waiters to a read.
        this.scheduleCheck();
      }
    }
  }

  /** etcd's revision as of a linearizable call made after this one. */
  next(): Promise<number> {
    if (this.closedWith) return Promise.reject(this.closedWith.error);
    return new Promise((resolve, reject) => {
      this.waiters.push({ after: this.made, resolve, reject });
      this.scheduleCheck();
    });
  }

  /** Rejects every waiter, and later ones, with `error`. */
  close(error: unknown): void {
    this.closedWith = { error };
    clearTimeout(this.impatient);
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  /** Waiters that asked before call `number` was made, in order. */
  private before(number: number): Waiter[] {
    let count = 0;
    while (count < this.waiters.length && this.waiters[count].after < number) count++;
    return this.waiters.splice(0, count);
  }

  private answered(number: number, revision: number): void {
    for (const waiter of this.before(number)) waiter.resolve(revision);
  }

  /**
   * Decides once per turn of the event loop, after the turn's requests made their calls: a write made in the same
   * turn as a waiter asked (after it) answers it.
   */
  private scheduleCheck(): void {
    if (this.checkScheduled || this.closedWith) return;
    this.checkScheduled = true;
    setImmediate(() => {
      this.checkScheduled = false;
      this.check();
    });
  }

  private check(): void {
    if (this.waiters.length === 0 || this.reading || this.closedWith) return;
    if (this.writes === 0) {
      this.readNow();
      return;
    }
    // Each write's end brings a new check, and the requests it answers write again, after the waiters.
    if (!this.impatient) {
      this.impatient = setTimeout(() => {
        this.impatient = undefined;
        if (this.waiters.length > 0 && !this.reading && !this.closedWith) this.readNow();
      }, this.patienceMs);
      this.impatient.unref();
    }
  }

  private readNow(): void {
    this.reading = true;
    const number = this.made + 1;
    this.track(false, this.read).then(
      () => {
        this.reading = false;
        this.scheduleCheck();
      },
      (error: unknown) => {
        this.reading = false;
        // Those the read was for hear why it failed; later ones get a read of their own.
        for (const waiter of this.before(number)) waiter.reject(error);
        this.scheduleCheck();
      },
    );
  }
}
