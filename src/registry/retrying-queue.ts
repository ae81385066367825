// One task at a time per key (KeyedQueue), and a failed task run again later with doubling waits: what the
// platform's controllers (cluster workloads, apps, metrics) do with each object they bring to where it should be.
// A retry calls back into the owner's own scheduling, so it re-checks whatever decided the task should run (the
// object may be gone, or its cluster's tunnel held by another replica by then). A key has at most one task waiting
// to start: a task reads the object when it starts, so a second one queued behind it would do the same work again,
// and whatever schedules often (an agent reconnecting in a loop) would queue work without bound.

import { KeyedQueue } from "./keyed-queue.ts";

export interface RetryingQueueOptions {
  /** The wait before the first retry; each next one doubles, up to maxRetryMs. */
  firstRetryMs: number;
  maxRetryMs: number;
  /** Told of each failure before its retry is set (not once stopped). */
  failed?: (key: string, error: unknown) => void;
}

export class RetryingQueue {
  readonly #options: RetryingQueueOptions;
  readonly #queue = new KeyedQueue();
  readonly #retries = new Map<string, { delay: number; timer: NodeJS.Timeout }>();
  /** Keys with a task queued that has not started yet. */
  readonly #waiting = new Set<string>();
  #stopped = false;

  constructor(options: RetryingQueueOptions) {
    this.#options = options;
  }

  /**
   * Runs `task` after the key's running one; on failure `again()` is called after the key's next wait. Nothing is
   * queued when the key already has a task waiting to start (that one runs instead).
   */
  run(key: string, task: () => Promise<void>, again: () => void): void {
    if (this.#stopped) return;
    clearTimeout(this.#retries.get(key)?.timer);
    if (this.#waiting.has(key)) return;
    this.#waiting.add(key);
    const started = () => {
      this.#waiting.delete(key);
      return task();
    };
    this.#queue.run(key, started).then(
      () => this.#retries.delete(key),
      (error: unknown) => this.#retry(key, error, again),
    );
  }

  /**
   * The owner no longer tracks `key` (its object is gone): its pending retry is dropped with the wait it had reached.
   * Without this every object that failed and then went would keep an entry for the queue's life.
   */
  forget(key: string): void {
    clearTimeout(this.#retries.get(key)?.timer);
    this.#retries.delete(key);
  }

  /** Retries waiting (one per key at most). */
  get retrying(): number {
    return this.#retries.size;
  }

  /** No task starts and no retry fires after this. */
  stop(): void {
    this.#stopped = true;
    for (const retry of this.#retries.values()) clearTimeout(retry.timer);
    this.#retries.clear();
  }

  #retry(key: string, error: unknown, again: () => void): void {
    if (this.#stopped) return;
    this.#options.failed?.(key, error);
    const { firstRetryMs, maxRetryMs } = this.#options;
    const delay = Math.min(maxRetryMs, (this.#retries.get(key)?.delay ?? firstRetryMs / 2) * 2);
    const timer = setTimeout(again, delay);
    timer.unref();
    this.#retries.set(key, { delay, timer });
  }
}
