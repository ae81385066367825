// Snapshots of a store's database: written online with SQLite's backup API from the serving connection (pages are
// copied a step at a time on libuv's thread pool, and SQLite copies every page the connection changes meanwhile into
// the snapshot too, so the file is the store as of one committed revision), and checked before anyone trusts one.

import { existsSync } from "node:fs";
import { backup, DatabaseSync } from "node:sqlite";
import { setTimeout as sleep } from "node:timers/promises";
import { StorageError } from "../types.ts";
import { openDatabase } from "./schema.ts";
import { toStorageError } from "./sqlite-errors.ts";

/** What a snapshot holds. */
export interface SnapshotInfo {
  /** The revision it was taken at (the store's newest revision then). */
  revision: number;
  /** The oldest revision its history can still be read from. */
  compactedRevision: number;
  /** Live keys (objects and the platform's internal records). */
  keys: number;
}

/** Pages copied per step: about 1 MiB, so the serving thread waits at most one short copy for the connection. */
const PAGES_PER_STEP = 256;
/** node:sqlite gives up when the very first step meets the connection inside a write: starting over is safe. */
const ATTEMPTS = 50;
const KV_COLUMNS = ["id", "name", "created", "deleted", "create_revision", "prev_revision", "value"];

/**
 * Writes a snapshot of `db` (the store's own connection) to `file` while it keeps serving, then makes the file a
 * stand-alone database (rollback journal instead of WAL) so it is complete without companion files.
 */
export async function writeSnapshot(db: DatabaseSync, file: string): Promise<void> {
  const path = db.location() ?? ":memory:";
  for (let attempt = 1; ; attempt++) {
    try {
      await backup(db, file, { rate: PAGES_PER_STEP });
      break;
    } catch (error) {
      // A step that finds a write in progress returns SQLITE_BUSY, which node:sqlite retries, except before the
      // first page was copied: then it rejects with "not an error" (errcode 0) and nothing was written yet.
      if (attempt < ATTEMPTS && (error as { errcode?: unknown }).errcode === 0) {
        await sleep(attempt);
        continue;
      }
      const mapped = toStorageError(error, path);
      if (!(mapped instanceof StorageError)) throw error;
      const reason = (error as { errstr?: string }).errstr ?? mapped.message;
      throw new StorageError(
        mapped.storageCode,
        `snapshot of ${path} into ${file} failed: ${reason}`,
        {},
        { cause: error },
      );
    }
  }
  const copy = new DatabaseSync(file, { timeout: 0 });
  try {
    copy.exec("PRAGMA journal_mode = DELETE");
  } finally {
    copy.close();
  }
}

/**
 * Snapshots the store file at `path` when no process serves it (the exclusive lock is taken, so a platform started
 * meanwhile waits for nothing: it fails "locked"). Fails when there is no store at `path`.
 */
export async function snapshotStoreFile(path: string, file: string): Promise<void> {
  if (!existsSync(path)) throw new Error(`there is no store at ${path}`);
  const db = openDatabase(path, "FULL");
  try {
    await writeSnapshot(db, file);
  } finally {
    db.close();
  }
}

/**
 * Checks that `file` is an intact store database (SQLite's integrity check and this store's schema) and says what
 * it holds. Opens it read-write (a snapshot may be in WAL mode), so callers pass their own copy.
 * Fails with StorageError "Corrupt" naming the file.
 */
export function inspectSnapshot(file: string): SnapshotInfo {
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { timeout: 0 });
    const problems = db
      .prepare("PRAGMA integrity_check(5)")
      .all()
      .map((row) => String(row.integrity_check))
      .filter((line) => line !== "ok");
    if (problems.length > 0) throw new StorageError("Corrupt", `${file} is corrupt: ${problems.join("; ")}`);
    const columns = db
      .prepare("SELECT name FROM pragma_table_info('kv')")
      .all()
      .map((row) => String(row.name));
    const meta = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
    if (columns.join(",") !== KV_COLUMNS.join(",") || !meta) {
      throw new StorageError(
        "Corrupt",
        `${file} is a SQLite database but not a store snapshot (no kv and meta tables)`,
      );
    }
    const sequence = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'kv'").get();
    const compacted = db.prepare("SELECT value FROM meta WHERE name = 'compacted_revision'").get();
    const live = db
      .prepare("SELECT COUNT(*) AS n FROM (SELECT MAX(id), deleted FROM kv GROUP BY name) WHERE deleted = 0")
      .get();
    return {
      revision: Number(sequence?.seq ?? 0),
      compactedRevision: Number(compacted?.value ?? 0),
      keys: Number(live?.n ?? 0),
    };
  } catch (error) {
    throw toStorageError(error, file);
  } finally {
    db?.close();
  }
}
