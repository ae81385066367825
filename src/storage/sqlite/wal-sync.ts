// The WAL's fsync on libuv's thread pool instead of inside COMMIT. With SQLite's synchronous=NORMAL a COMMIT only
// writes its WAL frames (into the OS page cache); a later fdatasync of the WAL file makes every frame written before
// it durable, which is exactly what synchronous=FULL does inside COMMIT, but without blocking the event loop for the
// disk. A commit starts its own fsync while few run (a lone writer waits for one fsync); past that, the commits that
// ask wait together for the next one, so under load one fsync covers many transactions. The file is the one SQLite
// keeps open: in WAL mode it never deletes or replaces the -wal file while its connection is open (checkpoints
// rewrite or truncate it in place).

import { type FileHandle, open } from "node:fs/promises";

export interface WalSyncOptions {
  /** The database file; its WAL is `<path>-wal`. */
  path: string;
  /**
   * fsyncs run at once (default 2). A request waits for none of them: it starts its own while fewer run, so a lone
   * writer waits for one fsync, not for the rest of another; past the bound, requests share the next one.
   */
  maxInFlight?: number;
  /** For tests: the fsync itself (default: fdatasync of the WAL file on the thread pool). */
  sync?: () => Promise<void>;
}

export class WalSync {
  readonly #walPath: string;
  readonly #sync: () => Promise<void>;
  readonly #maxInFlight: number;
  #handle?: Promise<FileHandle>;
  readonly #running = new Set<Promise<void>>();
  #next?: PromiseWithResolvers<void>;
  #failure?: Error;

  constructor(options: WalSyncOptions) {
    this.#walPath = `${options.path}-wal`;
    this.#sync = options.sync ?? (() => this.#datasync());
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 2);
  }

  /** The fsync failure that ended durability, if any: no write can be promised durable after it. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /**
   * Resolves once an fsync that started after this call has finished, so everything written to the WAL before the
   * call is durable; rejects when that fsync fails (and every later request with it).
   */
  request(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#running.size < this.#maxInFlight) return this.#start();
    // The running fsyncs may have started before the caller's frames were written: wait for the next one.
    this.#next ??= Promise.withResolvers<void>();
    return this.#next.promise;
  }

  /** Waits for the fsyncs in progress and closes the WAL file. */
  async close(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled(this.#running);
    const handle = this.#handle;
    this.#handle = undefined;
    await (await handle?.catch(() => undefined))?.close();
  }

  #start(): Promise<void> {
    const run = this.#syncOnce().finally(() => {
      this.#running.delete(run);
      const next = this.#next;
      this.#next = undefined;
      if (next) this.#start().then(next.resolve, next.reject);
    });
    this.#running.add(run);
    return run;
  }

  async #syncOnce(): Promise<void> {
    if (this.#failure) throw this.#failure;
    try {
      await this.#sync();
    } catch (error) {
      // After a failed fsync the kernel may already have dropped the dirty pages: nothing later can be trusted.
      this.#failure = new Error(`fsync of ${this.#walPath} failed: ${(error as Error).message}`, { cause: error });
      throw this.#failure;
    }
  }

  async #datasync(): Promise<void> {
    this.#handle ??= open(this.#walPath, "r+");
    await (await this.#handle).datasync();
  }
}
