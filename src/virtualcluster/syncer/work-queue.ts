import { defaultRateLimiter, type RateLimiter } from "./rate-limiter.ts";

/** Timer functions, injectable so tests control time. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout(callback, ms) {
    const handle = setTimeout(callback, ms);
    handle.unref(); // a pending retry alone does not keep the process alive
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface WorkQueueOptions {
  rateLimiter?: RateLimiter;
  timers?: Timers;
}

/**
 * A work queue with client-go's guarantees: a key waits at most once (adding it again while it waits does
 * nothing), a key is handed to one worker at a time (added while being processed, it comes back after `done`), and
 * retries are delayed by a rate limiter. Keys come out in the order they were first added.
 */
export class WorkQueue {
  /** Keys that need processing (waiting in `#ready`, or being processed and to be handed out again). */
  readonly #dirty = new Set<string>();
  /** Keys ready to hand out, in order (a Set keeps insertion order). */
  readonly #ready = new Set<string>();
  readonly #processing = new Set<string>();
  /** Delayed adds: key -> due time and timer. */
  readonly #delayed = new Map<string, { due: number; handle: unknown }>();
  readonly #getters: ((key: string | undefined) => void)[] = [];
  readonly #limiter: RateLimiter;
  readonly #timers: Timers;
  #shutDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#limiter = options.rateLimiter ?? defaultRateLimiter();
    this.#timers = options.timers ?? realTimers;
  }

  /** Marks `key` as needing processing. */
  add(key: string): void {
    if (this.#shutDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return; // handed out again by done()
    this.#hand(key);
  }

  /** Adds `key` after `ms` milliseconds; an earlier pending delayed add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.#shutDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const due = performance.now() + ms;
    const pending = this.#delayed.get(key);
    if (pending && pending.due <= due) return;
    if (pending) this.#timers.clearTimeout(pending.handle);
    const handle = this.#timers.setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, ms);
    this.#delayed.set(key, { due, handle });
  }

  /** Retries `key` after the rate limiter's delay (per-key exponential backoff, overall token bucket). */
  addRateLimited(key: string): number {
    const delay = this.#limiter.when(key);
    this.addAfter(key, delay);
    return delay;
  }

  /** `key` was processed successfully: its backoff starts over. */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  /** Failures of `key` since it last succeeded. */
  retries(key: string): number {
    return this.#limiter.failures(key);
  }

  /** The next key to process; undefined once the queue is shut down. Call done(key) when finished. */
  get(): Promise<string | undefined> {
    const key = this.#next();
    if (key !== undefined || this.#shutDown) return Promise.resolve(key);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /** Processing of `key` finished; if it was added meanwhile it is handed out again. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) this.#hand(key);
  }

  /** Wakes every waiting get() with undefined and drops all pending work. */
  shutDown(): void {
    this.#shutDown = true;
    for (const { handle } of this.#delayed.values()) this.#timers.clearTimeout(handle);
    this.#delayed.clear();
    for (const getter of this.#getters.splice(0)) getter(undefined);
  }

  /** Keys ready to be handed out. */
  get length(): number {
    return this.#ready.size;
  }

  /** Keys waiting for a delayed (retry) add. */
  get waiting(): number {
    return this.#delayed.size;
  }

  /** Keys being processed. */
  get processing(): number {
    return this.#processing.size;
  }

  #hand(key: string): void {
    const getter = this.#getters.shift();
    if (getter) {
      this.#take(key);
      getter(key);
    } else {
      this.#ready.add(key);
    }
  }

  #next(): string | undefined {
    const first = this.#ready.values().next();
    if (first.done) return undefined;
    this.#ready.delete(first.value);
    this.#take(first.value);
    return first.value;
  }

  #take(key: string): void {
    this.#dirty.delete(key);
    this.#processing.add(key);
  }
}
