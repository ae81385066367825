// Short-lived records that every process on a store must see (logins between their start and their callback,
// identifiers that may be used once, failure counts): one key per record under a prefix, named by the SHA-256 of
// its id (an id may be a secret, such as an OAuth state), holding a JSON object with `expiresAt` (epoch ms). An
// expired record reads as absent at once; sweepExpired(), run by one process (the leader), deletes it later.
// take() and claim() are compare-and-swap writes, so of two processes only one takes a record or claims an id.

import { createHash } from "node:crypto";
import { deleteIfPresent } from "./delete-if-present.ts";
import { type KeyValueStore, StorageError, type StoredRecord } from "./types.ts";

/** The envelope of a record (other stored JSON under a swept prefix only needs `expiresAt`). */
interface Envelope<T> {
  expiresAt: number | null;
  value?: T;
}

const SWEEP_PAGE = 500;

const isStorage = (error: unknown, ...codes: string[]) =>
  error instanceof StorageError && codes.includes(error.storageCode);

const expiresAtOf = (text: string): number | null => {
  const { expiresAt } = JSON.parse(text) as { expiresAt?: unknown };
  return typeof expiresAt === "number" ? expiresAt : null;
};

export interface ExpiringRecordsOptions {
  storage: KeyValueStore;
  /** Ends with "/". */
  prefix: string;
  now?: () => number;
}

export class ExpiringRecords<T> {
  readonly #storage: KeyValueStore;
  readonly #prefix: string;
  readonly #now: () => number;

  constructor(options: ExpiringRecordsOptions) {
    this.#storage = options.storage;
    this.#prefix = options.prefix;
    this.#now = options.now ?? Date.now;
  }

  /** The store key of an id. */
  keyOf(id: string): string {
    return `${this.#prefix}${createHash("sha256").update(id).digest("base64url")}`;
  }

  /** Stores `value` under a new id until `expiresAt`; an id already stored is a StorageError "KeyExists". */
  async put(id: string, value: T, expiresAt: number): Promise<void> {
    await this.#storage.create(this.keyOf(id), JSON.stringify({ expiresAt, value } satisfies Envelope<T>));
  }

  /** The value of `id`, removed so no process gets it again; undefined when unknown, expired or taken already. */
  async take(id: string): Promise<T | undefined> {
    const key = this.keyOf(id);
    const record = await this.#storage.get(key);
    if (!record) return undefined;
    const envelope = JSON.parse(record.value) as Envelope<T>;
    if (!(await deleteIfPresent(this.#storage, key, record.revision))) return undefined;
    return this.#live(envelope) ? envelope.value : undefined;
  }

  /**
   * Records `id` until `untilMs`: true for the first claim, false while an earlier claim of it lives (a replay).
   * An expired claim is replaced.
   */
  async claim(id: string, untilMs: number): Promise<boolean> {
    const key = this.keyOf(id);
    const value = JSON.stringify({ expiresAt: untilMs } satisfies Envelope<T>);
    try {
      await this.#storage.create(key, value);
      return true;
    } catch (error) {
      if (!isStorage(error, "KeyExists")) throw error;
      const current: StoredRecord | undefined = (error as StorageError).current ?? (await this.#storage.get(key));
      if (!current) return this.claim(id, untilMs);
      if (this.#live({ expiresAt: expiresAtOf(current.value) })) return false;
      try {
        await this.#storage.update(key, value, current.revision);
        return true;
      } catch (lost) {
        // Another process replaced or swept it first: only a claim now in place counts, and that one is theirs.
        if (isStorage(lost, "Conflict")) return false;
        if (isStorage(lost, "NotFound")) return this.claim(id, untilMs);
        throw lost;
      }
    }
  }

  /** Removes `id` (a no-op when it is gone). */
  async delete(id: string): Promise<void> {
    await deleteIfPresent(this.#storage, this.keyOf(id));
  }

  #live(envelope: Envelope<T>): boolean {
    return envelope.expiresAt === null || envelope.expiresAt > this.#now();
  }
}

export interface SweepOptions {
  storage: KeyValueStore;
  prefix: string;
  now?: () => number;
  /** Called with each record this sweep deleted (what belongs to it elsewhere can go too). */
  deleted?(record: StoredRecord): Promise<void>;
}

/**
 * Deletes every record under the prefix whose JSON value has an `expiresAt` in the past (values without one stay);
 * resolves to how many it deleted. A record changed or deleted meanwhile by another process is left to it.
 */
export async function sweepExpired(options: SweepOptions): Promise<number> {
  const { storage, prefix } = options;
  const now = (options.now ?? Date.now)();
  let deleted = 0;
  let startAfter: string | undefined;
  for (;;) {
    const { records } = await storage.list({ prefix, limit: SWEEP_PAGE, startAfter });
    for (const record of records) {
      const expiresAt = expiresAtOf(record.value);
      if (expiresAt === null || expiresAt > now) continue;
      if (!(await deleteIfPresent(storage, record.key, record.revision))) continue;
      deleted++;
      await options.deleted?.(record);
    }
    if (records.length < SWEEP_PAGE) return deleted;
    startAfter = records[records.length - 1].key;
  }
}
