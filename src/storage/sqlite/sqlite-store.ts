// The embedded KeyValueStore on node:sqlite: a kine-style append-only log in one table, group commit for
// throughput, an in-process watch hub fed by the append path, and compaction. See ../FLOW.md for the whole flow.

import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { compareUtf8 } from "../../utils/utf8-compare.ts";
import { prefixEnd } from "../prefix-end.ts";
import type { ReclaimRun, StoreStats } from "../store-stats.ts";
import {
  type KeyValueStore,
  type ListOptions,
  type ListResult,
  StorageError,
  type StoredRecord,
  type WatchEvent,
  type Watcher,
  type WatchOptions,
} from "../types.ts";
import { WatchHub } from "../watch-hub.ts";
import { AppendLog, type WriteRequest } from "./append-log.ts";
import {
  type AutoVacuumMode,
  type ConversionEvent,
  DEFAULT_CONVERT_MAX_BYTES,
  ensureIncrementalVacuum,
  rebuildOpenStoreFile,
} from "./auto-vacuum.ts";
import { Checkpointer } from "./checkpointer.ts";
import { Compactor } from "./compactor.ts";
import { fileSizes } from "./file-stats.ts";
import { GroupCommit } from "./group-commit.ts";
import { readHistory } from "./history.ts";
import { LatestCache } from "./latest-cache.ts";
import { Pacer } from "./pacer.ts";
import { openDatabase, type SynchronousMode } from "./schema.ts";
import { writeSnapshot } from "./snapshot.ts";
import { toStorageError } from "./sqlite-errors.ts";
import { prepareStatements, type Statements } from "./statements.ts";
import { IncrementalVacuum, type VacuumOptions } from "./vacuum.ts";
import { WalSync } from "./wal-sync.ts";

export interface SqliteStoreOptions {
  /** Database file (its directory must exist) or ":memory:". */
  path: string;
  /** FULL (default): a write survives power loss. NORMAL: it survives the process being killed, not power loss. */
  synchronous?: SynchronousMode;
  /**
   * With FULL, where the WAL's fsync runs. "commit" (default): inside COMMIT, blocking the event loop for the disk.
   * "thread-pool": on libuv's thread pool after COMMIT (see wal-sync.ts); a write is still acknowledged only once it
   * is durable, but the process keeps serving meanwhile, and reads and watchers see a write from its COMMIT on.
   */
  fsync?: "commit" | "thread-pool";
  /** Events a watcher may have queued before it is cut off as slow (default 10,000). */
  watchBufferLimit?: number;
  /** Periodic compaction keeping the newest `keepRevisions` revisions readable; off unless given. */
  autoCompact?: { intervalMs: number; keepRevisions: number };
  /** Bytes of recently read values kept in memory for get() (default 16 MiB; 0 turns the cache off). */
  readCacheBytes?: number;
  /**
   * Bytes of SQLite's page cache (default 32 MiB). Pages beyond it are read again from the file, usually from the
   * OS's cache, which does not count against the process's memory.
   */
  pageCacheBytes?: number;
  /**
   * WAL checkpoint schedule (see checkpointer.ts): delay after writes (default 250 ms), row cap (2,000), and the
   * quiet time after which the WAL file is truncated (default 2 s).
   */
  checkpoint?: { intervalMs?: number; maxRows?: number; truncateAfterIdleMs?: number };
  /**
   * Returning pages freed by compaction to the file system (see vacuum.ts): each step's time budget and when a run
   * starts. On by default; false leaves freed pages for later writes to reuse.
   */
  vacuum?: Pick<VacuumOptions, "stepBudgetMs" | "minFreeBytes" | "minFreeShare"> | false;
  /** A file made before incremental auto-vacuum is converted at open up to this size (default 1 GiB; auto-vacuum.ts). */
  convertMaxBytes?: number;
  /** Hears of that conversion: started, converted (with its duration) or skipped (with the reason). */
  onConversion?(event: ConversionEvent): void;
  /** Called when writes start failing for lack of space (true) and when they can succeed again (false). */
  onSpaceChange?(outOfSpace: boolean, message: string): void;
  /**
   * For tests of the out-of-space path: caps the database at this many pages, asked before every write and space
   * probe. SQLite then fails writes with SQLITE_FULL exactly as on a full disk; raising the cap is space returning.
   */
  pageLimit?: () => number;
  /** For tests of fsync "thread-pool": the WAL fsync itself (default: fdatasync of the WAL file). */
  syncWal?: () => Promise<void>;
}

/** Room a space probe wants before it says writes can succeed again: pages under the page cap, bytes on disk. */
const ROOM_PAGES = 256;
const ROOM_BYTES = 4 * 1024 * 1024;

export async function openSqliteStore(options: SqliteStoreOptions): Promise<KeyValueStore> {
  return new SqliteStore(options);
}

type RecordRow = [string, number, number, string];

class SqliteStore implements KeyValueStore {
  private readonly db: DatabaseSync;
  private readonly statements: Statements;
  private readonly writes: GroupCommit;
  private readonly hub: WatchHub;
  private readonly compactor: Compactor;
  private readonly latest: LatestCache;
  private readonly checkpointer?: Checkpointer;
  private readonly walSync?: WalSync;
  private readonly vacuum?: IncrementalVacuum;
  private readonly timer?: NodeJS.Timeout;
  private readonly options: SqliteStoreOptions;
  private readonly snapshots = new Set<Promise<void>>();
  /** Spaces compaction chunks and vacuum steps out while writes wait. */
  private readonly pacer = new Pacer({ busy: () => this.writes.pending });
  /** Moves whenever the files' sizes may have: a write to the WAL, a checkpoint, a rebuild (statsVersion()). */
  private fileChanges = 0;
  /** The message of the write that last failed for space, until a write succeeds or a probe finds room. */
  private outOfSpace?: string;
  private closed = false;

  constructor(options: SqliteStoreOptions) {
    this.options = options;
    const synchronous = options.synchronous ?? "FULL";
    const offLoop = synchronous === "FULL" && options.fsync === "thread-pool" && options.path !== ":memory:";
    // Off the loop, COMMIT only writes the WAL (NORMAL) and WalSync adds FULL's fsync before writes settle.
    const db = openDatabase(options.path, offLoop ? "NORMAL" : synchronous, options.pageCacheBytes);
    let statements: Statements;
    let last: [number] | undefined;
    let autoVacuum: AutoVacuumMode;
    try {
      autoVacuum = ensureIncrementalVacuum(db, options.path, {
        maxBytes: options.convertMaxBytes ?? DEFAULT_CONVERT_MAX_BYTES,
        report: options.onConversion,
      });
      statements = prepareStatements(db);
      last = statements.lastRevision.get() as [number] | undefined;
      this.compactor = new Compactor(db, statements, {
        pacer: this.pacer,
        onChunk: (rows) => this.written(rows),
      });
    } catch (error) {
      db.close();
      throw toStorageError(error, options.path);
    }
    const log = new AppendLog(statements, last ? last[0] : 0);
    this.db = db;
    this.statements = statements;
    this.latest = new LatestCache(options.readCacheBytes ?? 16 * 1024 * 1024);
    if (options.path !== ":memory:") {
      this.checkpointer = new Checkpointer({
        db,
        intervalMs: options.checkpoint?.intervalMs ?? 250,
        maxRows: options.checkpoint?.maxRows ?? 2_000,
        truncateAfterIdleMs: options.checkpoint?.truncateAfterIdleMs ?? 2_000,
        onCheckpoint: () => this.fileChanges++,
      });
    }
    if (options.vacuum !== false && autoVacuum === "incremental") {
      this.vacuum = new IncrementalVacuum({
        ...options.vacuum,
        db,
        pacer: this.pacer,
        paused: () => this.snapshots.size > 0,
        onStep: (pages) => this.written(pages),
      });
      // Pages a previous run freed and did not get to return.
      setImmediate(() => this.vacuum?.check());
    }
    this.hub = new WatchHub({
      bufferLimit: options.watchBufferLimit ?? 10_000,
      source: {
        revision: () => this.writes.committedRevision,
        compactedRevision: () => this.compactor.compacted,
        history: (prefix, after, limit) => readHistory(statements, prefix, after, limit),
      },
    });
    const walSync = offLoop ? new WalSync({ path: options.path, sync: options.syncWal }) : undefined;
    this.walSync = walSync;
    this.writes = new GroupCommit({
      db,
      statements,
      log,
      onCommit: (events) => this.committed(events),
      mapError: (error) => this.failed(error),
      durable: walSync && (() => walSync.request()),
    });
    const auto = options.autoCompact;
    if (auto) {
      // Errors are dropped: the next interval retries, and compaction never affects correctness, only space.
      this.timer = setInterval(() => this.compact(auto.keepRevisions).catch(() => {}), auto.intervalMs);
      this.timer.unref();
    }
  }

  async currentRevision(): Promise<number> {
    return this.revisionNow();
  }

  revisionNow(): number {
    this.ensureOpen();
    return this.writes.committedRevision;
  }

  async compactedRevision(): Promise<number> {
    this.ensureOpen();
    return this.compactor.compacted;
  }

  async get(key: string): Promise<StoredRecord | undefined> {
    this.ensureOpen();
    const cached = this.latest.get(key);
    if (cached) return cached;
    let row: [number, number, number, string] | undefined;
    try {
      row = this.statements.latest.get(key) as typeof row;
    } catch (error) {
      throw toStorageError(error, this.options.path);
    }
    if (!row || row[1] === 1) return undefined;
    const record = { key, value: row[3], revision: row[0], createRevision: row[2] };
    this.latest.remember(record);
    return record;
  }

  async list(options: ListOptions): Promise<ListResult> {
    this.ensureOpen();
    const revision = this.readRevision(options.revision ?? 0);
    const { prefix, startAfter } = options;
    const end = prefixEnd(prefix);
    const limit = options.limit && options.limit > 0 ? options.limit : -1;
    const resume = startAfter !== undefined && compareUtf8(startAfter, prefix) >= 0;
    const statement = resume ? this.statements.listAfter : this.statements.listFrom;
    let rows: RecordRow[];
    try {
      rows = statement.all(resume ? startAfter : prefix, end, revision, limit) as unknown as RecordRow[];
    } catch (error) {
      throw toStorageError(error, this.options.path);
    }
    const records: StoredRecord[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      records[i] = { key: row[0], value: row[3], revision: row[1], createRevision: row[2] };
    }
    let remaining = 0;
    if (rows.length === limit) {
      const counted = this.statements.countAfter.get(rows[rows.length - 1][0], end, revision) as unknown as [number];
      remaining = counted[0];
    }
    return { records, revision, remaining };
  }

  async count(prefix: string): Promise<number> {
    this.ensureOpen();
    try {
      const row = this.statements.countFrom.get(prefix, prefixEnd(prefix), this.writes.committedRevision);
      return (row as unknown as [number])[0];
    } catch (error) {
      throw toStorageError(error, this.options.path);
    }
  }

  create(key: string, value: string): Promise<StoredRecord> {
    return this.write({ type: "create", key, value });
  }

  update(key: string, value: string, expectedRevision: number): Promise<StoredRecord> {
    return this.write({ type: "update", key, value, expectedRevision });
  }

  updateChain(key: string, values: string[], expectedRevision: number): Promise<StoredRecord[]> {
    if (this.closed) return Promise.reject(closedError());
    if (this.walSync?.failure) return Promise.reject(this.failed(this.walSync.failure));
    if (values.length === 0) return Promise.resolve([]);
    this.applyPageLimit();
    return this.writes.submitChain({ type: "chain", key, values, expectedRevision });
  }

  delete(key: string, expectedRevision?: number): Promise<StoredRecord> {
    return this.write({ type: "delete", key, expectedRevision });
  }

  /** On a closed store the watch ends with "closed" (asynchronously) instead of throwing. */
  watch(options: WatchOptions): Watcher {
    return this.hub.watch(options);
  }

  async checkSpace(): Promise<void> {
    this.ensureOpen();
    if (this.outOfSpace === undefined) return;
    if (this.hasRoom()) this.spaceReturned();
    else throw new StorageError("NoSpace", this.outOfSpace);
  }

  async snapshot(file: string): Promise<void> {
    this.ensureOpen();
    const run = writeSnapshot(this.db, file);
    this.snapshots.add(run);
    try {
      await run;
    } finally {
      this.snapshots.delete(run);
    }
  }

  async rebuild(): Promise<ReclaimRun | undefined> {
    this.ensureOpen();
    // An online snapshot reads the connection from the thread pool: the next window rebuilds instead.
    if (this.snapshots.size > 0 || this.options.path === ":memory:") return undefined;
    const at = new Date();
    const event = rebuildOpenStoreFile(this.db, this.options.path);
    this.fileChanges++;
    this.latest.clear();
    const durationMs = event.durationMs ?? 0;
    return {
      at,
      durationMs,
      freedBytes: Math.max(0, event.bytesBefore - (event.bytesAfter ?? event.bytesBefore)),
      longestStepMs: durationMs,
    };
  }

  async compact(keepRevisions: number): Promise<number> {
    this.ensureOpen();
    const compacted = await this.compactor.compact(this.writes.committedRevision - Math.max(0, keepRevisions));
    this.written(1);
    this.vacuum?.check();
    return compacted;
  }

  statsVersion(): number {
    return this.fileChanges;
  }

  async stats(): Promise<StoreStats> {
    this.ensureOpen();
    try {
      return {
        backend: "sqlite",
        ...fileSizes(this.db, this.options.path),
        revision: this.writes.committedRevision,
        compactedRevision: this.compactor.compacted,
        lastReclaim: this.vacuum?.last,
      };
    } catch (error) {
      throw toStorageError(error, this.options.path);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.vacuum?.close();
    this.checkpointer?.close();
    // Writes accepted before close still commit (and their callers hear so); watchers hear "closed".
    this.writes.flushAll();
    this.latest.clear();
    this.hub.close();
    await this.writes.settled();
    await this.walSync?.close();
    // A snapshot in progress reads the connection from the thread pool: let it finish first.
    await Promise.allSettled(this.snapshots);
    this.db.close();
  }

  /** Rows reached the WAL (a commit, a compaction chunk, a vacuum step): a checkpoint is due, and the sizes moved. */
  private written(rows: number): void {
    this.fileChanges++;
    this.checkpointer?.committed(rows);
  }

  /** Right after COMMIT, in the same synchronous step: the read cache, then the watchers. */
  private committed(events: WatchEvent[]): void {
    if (this.outOfSpace !== undefined) this.spaceReturned();
    this.written(events.length);
    for (const event of events) {
      if (event.type === "delete") this.latest.forget(event.record.key);
      else if (event.type === "update") this.latest.updated(event.record);
    }
    this.hub.publish(events);
  }

  private write(request: WriteRequest): Promise<StoredRecord> {
    if (this.closed) return Promise.reject(closedError());
    if (this.walSync?.failure) return Promise.reject(this.failed(this.walSync.failure));
    this.applyPageLimit();
    return this.writes.submit(request);
  }

  /** A failed write's error as callers see it; a failure for space marks the store out of space. */
  private failed(error: unknown): unknown {
    if (error === this.walSync?.failure) {
      return new StorageError(
        "Unavailable",
        `storage ${this.options.path} cannot make writes durable (${(error as Error).message}); the last writes ` +
          "may or may not be kept: restart the server",
        {},
        { cause: error },
      );
    }
    const mapped = toStorageError(error, this.options.path);
    if (mapped instanceof StorageError && mapped.storageCode === "NoSpace") {
      const first = this.outOfSpace === undefined;
      this.outOfSpace = mapped.message;
      if (first) this.options.onSpaceChange?.(true, mapped.message);
    }
    return mapped;
  }

  private spaceReturned(): void {
    this.outOfSpace = undefined;
    this.options.onSpaceChange?.(false, `storage ${this.options.path} can be written again`);
  }

  /** Enough room under SQLite's page cap and on the file system for a write batch and its checkpoint. */
  private hasRoom(): boolean {
    this.applyPageLimit();
    const pragma = (name: string) => Number(Object.values(this.db.prepare(`PRAGMA ${name}`).get() ?? {})[0] ?? 0);
    const headroom = pragma("max_page_count") - pragma("page_count") + pragma("freelist_count");
    if (headroom < ROOM_PAGES) return false;
    if (this.options.path === ":memory:") return true;
    const fs = statfsSync(dirname(this.options.path));
    return fs.bavail * fs.bsize >= ROOM_BYTES;
  }

  private applyPageLimit(): void {
    if (this.options.pageLimit) this.db.exec(`PRAGMA max_page_count = ${Math.floor(this.options.pageLimit())}`);
  }

  /** The revision a list reads at: latest for 0, clamped to the latest, Compacted below the compacted revision. */
  private readRevision(requested: number): number {
    const current = this.writes.committedRevision;
    if (requested <= 0) return current;
    const compacted = this.compactor.compacted;
    if (requested < compacted) {
      throw new StorageError("Compacted", `revision ${requested} is compacted (oldest readable: ${compacted})`, {
        compactedRevision: compacted,
      });
    }
    return Math.min(requested, current);
  }

  private ensureOpen(): void {
    if (this.closed) throw closedError();
  }
}

function closedError(): StorageError {
  return new StorageError("Closed", "storage is closed");
}
