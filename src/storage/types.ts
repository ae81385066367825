// The storage contract: an etcd-shaped, revisioned key-value log (the kine design).
// One global revision counter; every create, update and delete appends one row and gets the next revision.
// The registry is written against this interface only, so a distributed backend can replace SQLite.

import type { ReclaimRun, StoreStats } from "./store-stats.ts";

/** One stored version of a key. `value` is the serialized object (JSON text) exactly as the registry wrote it. */
export interface StoredRecord {
  key: string;
  value: string;
  /** Revision of the write that produced this version (becomes metadata.resourceVersion). */
  revision: number;
  /** Revision at which the key was created (stays the same across updates). */
  createRevision: number;
}

export interface ListOptions {
  /** Key prefix, e.g. `/management.platform.sh/users/`. Keys are compared bytewise. */
  prefix: string;
  /** Maximum records to return; 0 or absent means all. */
  limit?: number;
  /** Return keys strictly greater than this one (how continue tokens resume). */
  startAfter?: string;
  /** Read the state as of this revision; 0 or absent means the latest. Older than the compacted revision: StorageError "Compacted". */
  revision?: number;
}

export interface ListResult {
  records: StoredRecord[];
  /** The revision the list was read at (echoed into ListMeta.resourceVersion). */
  revision: number;
  /** Records after the returned page that match the prefix at that revision. */
  remaining: number;
}

export type WatchEventType = "create" | "update" | "delete";

export interface WatchEvent {
  type: WatchEventType;
  /** For create/update: the new version. For delete: the last value, with `revision` set to the delete's revision. */
  record: StoredRecord;
  /** The version before this write (absent for create). */
  previous?: StoredRecord;
}

export type WatchCloseReason =
  /** The requested start revision is older than the compacted history (the client must re-list: 410). */
  | { kind: "compacted"; compactedRevision: number; requestedRevision: number }
  /** The watcher fell more than its buffer behind and was cut off so writers never wait (client re-lists). */
  | { kind: "slow" }
  /** The consumer or the store closed the watch. */
  | { kind: "closed" };

export interface WatchOptions {
  prefix: string;
  /** Deliver every event with revision > afterRevision. 0 means "from now on". */
  afterRevision: number;
  /**
   * Receives events in strict revision order, in batches (one batch per committed transaction or history read).
   * Return false to ask for a pause (backpressure); call `Watcher.resume()` when ready again. While paused, events
   * queue up to the store's buffer limit; past it the watch is closed with reason "slow".
   */
  onEvents(events: WatchEvent[]): boolean | undefined;
  /** Called exactly once when the watch ends for any reason. */
  onClose(reason: WatchCloseReason): void;
}

export interface Watcher {
  resume(): void;
  close(): void;
}

/**
 * - KeyExists, NotFound, Conflict: a write's precondition failed (nothing written).
 * - Compacted: a list or watch asked for a revision older than the compacted history.
 * - Closed: the store is closed.
 * - NoSpace: the backend is out of space (its disk is full, or it reached a size limit). Nothing of the failed write
 *   was stored and no revision was taken; reads keep working and writes succeed again once space is freed.
 * - Corrupt: the backend's files are damaged (not a database, a broken page). The message names the file; the way
 *   out is restoring a backup.
 * - Unavailable: a networked backend (etcd) did not answer in time or has no quorum. A write that failed so may
 *   still have been applied; reads and writes succeed again once the backend is back.
 */
export type StorageErrorCode =
  | "KeyExists"
  | "NotFound"
  | "Conflict"
  | "Compacted"
  | "Closed"
  | "NoSpace"
  | "Corrupt"
  | "Unavailable";

/** Raised by backends; the registry maps it to a Status (409, 404, 410, 507...). */
export class StorageError extends Error {
  readonly storageCode: StorageErrorCode;
  /** For Conflict and KeyExists: the current record, when known. */
  readonly current?: StoredRecord;
  /** For Compacted: the oldest revision still readable. */
  readonly compactedRevision?: number;

  constructor(
    code: StorageErrorCode,
    message: string,
    extra: { current?: StoredRecord; compactedRevision?: number } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "StorageError";
    this.storageCode = code;
    this.current = extra.current;
    this.compactedRevision = extra.compactedRevision;
  }
}

export interface KeyValueStore {
  /** The newest committed revision (0 for an empty store). */
  currentRevision(): Promise<number>;
  /**
   * currentRevision() answered synchronously, by backends that know it without I/O. Lets a caller that only wants
   * to know whether it is caught up skip a turn of the event loop on every request (see StoreInformer.fresh).
   */
  revisionNow?(): number;
  /** The oldest revision still readable by list/watch (0 when nothing was compacted). */
  compactedRevision(): Promise<number>;
  get(key: string): Promise<StoredRecord | undefined>;
  list(options: ListOptions): Promise<ListResult>;
  /** Live keys under a prefix at the latest revision. */
  count(prefix: string): Promise<number>;
  /** Fails with KeyExists if the key is live. Resolves only once the write is durable. */
  create(key: string, value: string): Promise<StoredRecord>;
  /** Compare-and-swap: fails with Conflict unless the key's current revision is `expectedRevision`; NotFound if absent. */
  update(key: string, value: string, expectedRevision: number): Promise<StoredRecord>;
  /**
   * Optional: several consecutive versions of one key in one durable write, all or none. The first is a
   * compare-and-swap on `expectedRevision` (Conflict / NotFound as in update), each next one follows the previous
   * (revisions in order, one watch event each). Lets queued writers of one key share a commit.
   */
  updateChain?(key: string, values: string[], expectedRevision: number): Promise<StoredRecord[]>;
  /** Removes the key. With `expectedRevision`, compare-and-swap as in update. Resolves to the deleted version (revision = delete revision). */
  delete(key: string, expectedRevision?: number): Promise<StoredRecord>;
  watch(options: WatchOptions): Watcher;
  /**
   * Optional: resolves while writes can succeed as far as space goes; rejects with StorageError "NoSpace" after a
   * write failed for space until a later write succeeds or a probe finds room again. Backs /readyz.
   */
  checkSpace?(): Promise<void>;
  /**
   * Optional: writes a consistent snapshot of the whole store (every key and its history since the compacted
   * revision) to `file` while the store keeps serving, like `etcdctl snapshot save`. `file` must not be in use.
   */
  snapshot?(file: string): Promise<void>;
  /** Optional: the store's size on disk, in use and free, and its last vacuum (see store-stats.ts). */
  stats?(): Promise<StoreStats>;
  /**
   * Optional, beside stats(): a number, answered without I/O, that moves whenever what stats() reports may have
   * changed (SQLite: a write to the WAL, a checkpoint, a rebuild). A caller that keeps the sizes reads them again
   * only when it moved (StoreMonitor); what changes outside the store (free disk space) it must still poll.
   */
  statsVersion?(): number;
  /**
   * Optional: rebuilds the store's files densely (SQLite: a full VACUUM, beyond the incremental steps). Disruptive:
   * writes wait for the whole run, so the platform calls it only inside the maintenance window. Resolves to what it
   * returned, or undefined when it could not run now (a snapshot in progress).
   */
  rebuild?(): Promise<ReclaimRun | undefined>;
  /** Drops history so that only the newest `keepRevisions` revisions stay readable; returns the new compacted revision. */
  compact(keepRevisions: number): Promise<number>;
  /** Ends all watches (reason "closed") and releases the backend. Further calls fail with StorageError "Closed". */
  close(): Promise<void>;
}
