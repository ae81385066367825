// The WAL's fsync on libuv's thread pool instead of inside COMMIT. With SQLite's synchronous=NORMAL a COMMIT only
// writes its WAL frames (into the OS page cache); a later fdatasync of the WAL file makes every frame written before
// it durable, which is exactly what synchronous=FULL does inside COMMIT, but without blocking the event loop for the
// disk. Requests coalesce: while one fsync runs, every commit that asks waits for the next one, so under load one
// fsync covers many transactions. The file is the one SQLite keeps open: in WAL mode it never deletes or replaces
// the -wal file while its connection is open (checkpoints rewrite or truncate it in place).

import { type FileHandle, open } from "node:fs/promises";

export interface WalSyncOptions {
  /** The database file; its WAL is `<path>-wal`. */
  path: string;
  /** For tests: the fsync itself (default: fdatasync of the WAL file on the thread pool). */
  sync?: () => Promise<void>;
}

export class WalSync {
  readonly #walPath: string;
  readonly #sync: () => Promise<void>;
  #handle?: Promise<FileHandle>;
  #running?: Promise<void>;
  #next?: PromiseWithResolvers<void>;
  #failure?: Error;

  constructor(options: WalSyncOptions) {
    this.#walPath = `${options.path}-wal`;
    this.#sync = options.sync ?? (() => this.#datasync());
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
    if (!this.#running) {
      this.#running = this.#run();
      return this.#running;
    }
    // The running fsync may have started before the caller's frames were written: wait for the next one.
    this.#next ??= Promise.withResolvers<void>();
    return this.#next.promise;
  }

  /** Waits for the fsyncs in progress and closes the WAL file. */
  async close(): Promise<void> {
    while (this.#running) await this.#running.catch(() => {});
    const handle = this.#handle;
    this.#handle = undefined;
    await (await handle?.catch(() => undefined))?.close();
  }

  #run(): Promise<void> {
    return this.#syncOnce().finally(() => {
      this.#running = undefined;
      const next = this.#next;
      this.#next = undefined;
      if (next) {
        this.#running = this.#run();
        this.#running.then(next.resolve, next.reject);
      }
    });
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
