export type WriteSide = "host" | "virtual";

/** What the syncer has done so far. */
export interface SyncerStats {
  /** Successful writes per side, kind and verb, e.g. writes.host.Endpoints.create. */
  writes: Record<WriteSide, Record<string, Record<string, number>>>;
  totalWrites: number;
  /** Keys ready to sync plus keys being synced. */
  queueDepth: number;
  /** Keys waiting for a retry (backoff). */
  retrying: number;
  /** Keys synced (with or without a write). */
  syncs: number;
  /** Failed syncs (each is retried with backoff). */
  errors: number;
  /** SyncError events recorded or bumped. */
  syncErrorEvents: number;
  /** Objects stopped because their sync kept rewriting its own result (a patch that does not converge). */
  notConverging: number;
  /** Keys currently stopped as not converging. */
  stalled: number;
  /** Objects whose last sync failed (each is retried with backoff); 0 once they sync again. */
  failing: number;
  /** The latest failure, as `virtualcluster list -o wide` shows it. */
  lastError?: { key: string; message: string; time: string };
  /** The initial lists of every informer are done. */
  synced: boolean;
  /** Objects of the synced kinds in the virtual cluster (what the syncer keeps on the host); cost control's usage. */
  syncedObjects?: number;
}

/** Counters behind SyncerStats. */
export class StatsCounter {
  readonly writes: SyncerStats["writes"] = { host: {}, virtual: {} };
  totalWrites = 0;
  syncs = 0;
  errors = 0;
  syncErrorEvents = 0;
  notConverging = 0;
  readonly #failing = new Set<string>();
  #lastError: SyncerStats["lastError"];

  /** A key's sync failed with `message` (not a retry for a conflict). */
  failed(key: string, message: string): void {
    this.#failing.add(key);
    this.#lastError = { key, message, time: new Date().toISOString() };
  }

  /** A key synced: it is no longer failing. */
  synced(key: string): void {
    this.#failing.delete(key);
  }

  write(side: WriteSide, kind: string, verb: string): void {
    this.writes[side][kind] ??= {};
    const byVerb = this.writes[side][kind];
    byVerb[verb] = (byVerb[verb] ?? 0) + 1;
    this.totalWrites++;
  }

  snapshot(
    queue: { queueDepth: number; retrying: number; stalled: number },
    synced: boolean,
    syncedObjects?: number,
  ): SyncerStats {
    return {
      writes: structuredClone(this.writes),
      totalWrites: this.totalWrites,
      ...queue,
      syncs: this.syncs,
      errors: this.errors,
      syncErrorEvents: this.syncErrorEvents,
      notConverging: this.notConverging,
      failing: this.#failing.size,
      ...(this.#lastError ? { lastError: { ...this.#lastError } } : {}),
      synced,
      ...(syncedObjects === undefined ? {} : { syncedObjects }),
    };
  }
}
