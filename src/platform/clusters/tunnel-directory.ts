// Which replica holds a cluster's tunnel, in the store every replica shares (`/internal/clustertunnels/<cluster>`):
// the holder publishes its address and CA when the agent connects and at every heartbeat, and withdraws the record
// when that tunnel closes (only its own: a newer tunnel elsewhere may have replaced it). A replica without the
// tunnel relays a request to the holder. A record not refreshed for `staleAfterMs` (its replica died without
// withdrawing it) reads as absent.

import { type KeyValueStore, StorageError, type StorageErrorCode } from "../../storage/types.ts";
import type { ConnectedAgent } from "./tunnel-hub.ts";

const PREFIX = "/internal/clustertunnels/";

export interface TunnelRecord {
  /** The holder's base URL, as other replicas reach it. */
  replica: string;
  /** PEM of the CA of the holder's serving certificate (absent: the system's CAs). */
  caPem?: string;
  /** The tunnel's id. */
  id: string;
  updatedAt: number;
}

export interface TunnelDirectoryOptions {
  storage: KeyValueStore;
  /** This replica's address and CA, read when publishing (known once the server listens). */
  self(): { url: string; caPem?: string };
  staleAfterMs: number;
  now?: () => number;
}

const isStorage = (error: unknown, code: StorageErrorCode) =>
  error instanceof StorageError && error.storageCode === code;

export class TunnelDirectory {
  readonly #options: TunnelDirectoryOptions;
  readonly #now: () => number;

  constructor(options: TunnelDirectoryOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async publish(agent: ConnectedAgent): Promise<void> {
    const { url, caPem } = this.#options.self();
    const record: TunnelRecord = { replica: url, caPem, id: agent.id, updatedAt: this.#now() };
    const key = PREFIX + agent.cluster;
    const value = JSON.stringify(record);
    for (;;) {
      const current = await this.#options.storage.get(key);
      try {
        if (current) await this.#options.storage.update(key, value, current.revision);
        else await this.#options.storage.create(key, value);
        return;
      } catch (error) {
        if (!isStorage(error, "Conflict") && !isStorage(error, "KeyExists")) throw error;
      }
    }
  }

  async withdraw(agent: ConnectedAgent): Promise<void> {
    const key = PREFIX + agent.cluster;
    const current = await this.#options.storage.get(key);
    if (!current || (JSON.parse(current.value) as TunnelRecord).id !== agent.id) return;
    await this.#options.storage.delete(key, current.revision).catch((error: unknown) => {
      if (!isStorage(error, "Conflict") && !isStorage(error, "NotFound")) throw error;
    });
  }

  /** The replica holding the cluster's tunnel, if one published it recently. */
  async lookup(cluster: string): Promise<TunnelRecord | undefined> {
    const current = await this.#options.storage.get(PREFIX + cluster);
    if (!current) return undefined;
    const record = JSON.parse(current.value) as TunnelRecord;
    return this.#now() - record.updatedAt > this.#options.staleAfterMs ? undefined : record;
  }
}
