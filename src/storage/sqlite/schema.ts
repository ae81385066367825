// Opens the SQLite file and creates the schema: one append-only log table (the kine design) and a small meta table.

import { DatabaseSync } from "node:sqlite";
import { toStorageError } from "./sqlite-errors.ts";

export type SynchronousMode = "FULL" | "NORMAL";

/**
 * kv is the whole history. id is the global revision. A write's prev_revision is the id of the key's previous row
 * (0 for the first), so UNIQUE(name, prev_revision) lets only one write follow a given version: the CAS guard.
 * A delete appends a tombstone (deleted = 1, value NULL). kv_name_id finds "latest row per name" and makes counting
 * index-only; AUTOINCREMENT keeps revisions increasing even when compaction removes the newest row.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS kv (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  value TEXT,
  UNIQUE (name, prev_revision)
);
CREATE INDEX IF NOT EXISTS kv_name_id ON kv (name, id, deleted);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
`;

/**
 * SQLite's page cache of a store unless told otherwise: 8 MiB, the budget issue 36 states. Hot keys are answered
 * from the latest-record and encoded caches above it, and the file's pages stay in the kernel's page cache, so a
 * larger cache only held a second copy of the file in the process (32 MiB held 14 MiB more with 10,000 users).
 */
export const DEFAULT_PAGE_CACHE_BYTES = 8 * 1024 * 1024;

export function openDatabase(
  path: string,
  synchronous: SynchronousMode,
  pageCacheBytes = DEFAULT_PAGE_CACHE_BYTES,
): DatabaseSync {
  // timeout 0: a second process on the same file fails at once instead of blocking the event loop.
  const db = new DatabaseSync(path, { timeout: 0 });
  try {
    if (path !== ":memory:") {
      // One process owns the log: the revision counter and the watch hub live in its memory. EXCLUSIVE also keeps
      // the WAL index in heap memory (no -shm file). Must precede the switch to WAL.
      db.exec("PRAGMA locking_mode = EXCLUSIVE");
    }
    // Freed pages can be handed back to the file system a few at a time (vacuum.ts). Takes effect on a new file;
    // an existing one keeps its mode until a VACUUM converts it (auto-vacuum.ts). Set before WAL creates the file.
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    if (path !== ":memory:") {
      const mode = db.prepare("PRAGMA journal_mode = WAL").get()?.journal_mode;
      if (mode !== "wal") throw new Error(`could not switch ${path} to WAL mode (got ${String(mode)})`);
    }
    db.exec(`PRAGMA synchronous = ${synchronous}`);
    db.exec(`PRAGMA cache_size = -${Math.max(64, Math.floor(pageCacheBytes / 1024))}`); // in KiB when negative
    db.exec("PRAGMA temp_store = MEMORY");
    // Compaction overwrites what it deletes: a superseded (say, plain-text or old-key) version leaves no trace in
    // the file. Only compaction deletes rows, so appends never pay for it.
    db.exec("PRAGMA secure_delete = ON");
    db.exec("PRAGMA journal_size_limit = 67108864"); // truncate the WAL back to 64 MiB after checkpoints
    // Taking the write lock here makes a second opener fail now, not on its first write.
    db.exec(`BEGIN IMMEDIATE; ${SCHEMA} COMMIT`);
    return db;
  } catch (error) {
    db.close();
    if (isBusy(error)) throw new Error(`storage ${path} is locked by another process`, { cause: error });
    throw toStorageError(error, path);
  }
}

function isBusy(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { errcode?: number }).errcode === 5;
}
