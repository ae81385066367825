// Which platform replicas are running: each one keeps a record of itself in the store (/internal/replicas/), renewed
// every `intervalMs` and valid for three intervals, and deletes it when it stops; the leader deletes the records of
// replicas that died without doing so. Read by `GET /platform/replicas` (replica-routes.ts), which the console's
// overview shows admins. On SQLite there is one replica; on etcd every replica on the prefix is listed.

import { deleteIfPresent } from "../storage/delete-if-present.ts";
import { sweepExpired } from "../storage/expiring-records.ts";
import { type KeyValueStore, StorageError } from "../storage/types.ts";

export const REPLICAS_PREFIX = "/internal/replicas/";
const DEFAULT_INTERVAL_MS = 15_000;

export interface Replica {
  /** host/pid, as the leader election names it. */
  identity: string;
  version: string;
  store: "sqlite" | "etcd";
  /** Whether it ran the controllers at its last renewal. */
  leading: boolean;
  startedAt: string;
  /** Its last renewal. */
  renewedAt: string;
}

interface ReplicaRecord extends Replica {
  /** Epoch ms after which the record counts as gone (and the leader deletes it). */
  expiresAt: number;
}

export interface ReplicaPresenceOptions {
  storage: KeyValueStore;
  identity: string;
  version: string;
  store: Replica["store"];
  leading(): boolean;
  intervalMs?: number;
  now?: () => number;
  onError?(error: unknown): void;
}

export class ReplicaPresence {
  readonly #options: ReplicaPresenceOptions;
  readonly #key: string;
  readonly #startedAt: string;
  #timer?: NodeJS.Timeout;
  #renewing: Promise<void> = Promise.resolve();

  constructor(options: ReplicaPresenceOptions) {
    this.#options = options;
    this.#key = `${REPLICAS_PREFIX}${encodeURIComponent(options.identity)}`;
    this.#startedAt = new Date(this.#now()).toISOString();
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  get #interval(): number {
    return this.#options.intervalMs ?? DEFAULT_INTERVAL_MS;
  }

  /** Writes the first record, then renews it every interval. */
  async start(): Promise<void> {
    await this.renew();
    this.#timer = setInterval(() => {
      this.#renewing = this.renew().catch((error) => this.#options.onError?.(error));
    }, this.#interval);
    this.#timer.unref();
  }

  /** Writes this replica's record now (and, on the leader, deletes the records of replicas gone silent). */
  async renew(): Promise<void> {
    const now = this.#now();
    const record: ReplicaRecord = {
      identity: this.#options.identity,
      version: this.#options.version,
      store: this.#options.store,
      leading: this.#options.leading(),
      startedAt: this.#startedAt,
      renewedAt: new Date(now).toISOString(),
      expiresAt: now + 3 * this.#interval,
    };
    await this.#put(JSON.stringify(record));
    if (record.leading) await sweepExpired({ storage: this.#options.storage, prefix: REPLICAS_PREFIX, now: () => now });
  }

  async #put(value: string, attempts = 3): Promise<void> {
    const storage = this.#options.storage;
    const current = await storage.get(this.#key);
    try {
      if (current) await storage.update(this.#key, value, current.revision);
      else await storage.create(this.#key, value);
    } catch (error) {
      // Swept while this process stalled (NotFound), or created meanwhile by a renewal that raced this one.
      const raced = error instanceof StorageError && ["NotFound", "KeyExists", "Conflict"].includes(error.storageCode);
      if (!raced || attempts <= 1) throw error;
      await this.#put(value, attempts - 1);
    }
  }

  /** The replicas whose records are live, by identity. */
  async list(): Promise<Replica[]> {
    const now = this.#now();
    const { records } = await this.#options.storage.list({ prefix: REPLICAS_PREFIX });
    return records
      .map((record) => JSON.parse(record.value) as ReplicaRecord)
      .filter((record) => record.expiresAt > now)
      .map(({ expiresAt: _, ...replica }) => replica)
      .sort((a, b) => a.identity.localeCompare(b.identity));
  }

  /** Stops renewing and deletes this replica's record. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#renewing;
    await deleteIfPresent(this.#options.storage, this.#key);
  }
}
