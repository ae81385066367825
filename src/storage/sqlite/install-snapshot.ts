// Puts a checked snapshot in place of a store's database file, atomically, holding the store's lock meanwhile.

import { renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { syncPath } from "../sync-path.ts";
import { StorageError } from "../types.ts";
import { openDatabase } from "./schema.ts";

export interface InstallSnapshotOptions {
  /** A checked snapshot in the same directory as `path` (so the move is a rename); it is moved, not copied. */
  file: string;
  /** The store's database file; created (empty) first when missing. */
  path: string;
  /** Replace a store that holds keys, or a damaged one; without it that is refused and nothing changes. */
  force: boolean;
}

/** The store that was replaced. */
export interface ReplacedStore {
  revision: number;
  keys: number;
  /** The file was no readable database (its revision and keys are unknown, given as 0). */
  damaged?: boolean;
}

export class StoreNotEmptyError extends Error {
  readonly replaced: ReplacedStore;

  constructor(path: string, replaced: ReplacedStore) {
    super(`${path} already holds a store (${replaced.keys} keys at revision ${replaced.revision})`);
    this.name = "StoreNotEmptyError";
    this.replaced = replaced;
  }
}

/**
 * Opening the target takes its exclusive lock: a process serving it makes this fail at once ("locked by another
 * process"), and none can open it until the new file is in place. The old store's WAL is folded in and removed
 * first, because SQLite would replay a WAL left beside the new file into it. A damaged file (forced) cannot be
 * locked: it and its companion files are replaced as they are (no process can be serving a file SQLite cannot read).
 */
export function installSnapshot(options: InstallSnapshotOptions): ReplacedStore {
  const { file, path } = options;
  let db: ReturnType<typeof openDatabase>;
  try {
    db = openDatabase(path, "FULL");
  } catch (error) {
    if (!(options.force && error instanceof StorageError && error.storageCode === "Corrupt")) throw error;
    for (const companion of ["-wal", "-shm", "-journal"]) rmSync(`${path}${companion}`, { force: true });
    moveInPlace(file, path);
    return { revision: 0, keys: 0, damaged: true };
  }
  try {
    const revision = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'kv'").get();
    const live = db
      .prepare("SELECT COUNT(*) AS n FROM (SELECT MAX(id), deleted FROM kv GROUP BY name) WHERE deleted = 0")
      .get();
    const replaced = { revision: Number(revision?.seq ?? 0), keys: Number(live?.n ?? 0) };
    if (replaced.keys > 0 && !options.force) throw new StoreNotEmptyError(path, replaced);
    // Back to a rollback journal: SQLite checkpoints the WAL and deletes it; the exclusive lock stays held.
    const mode = db.prepare("PRAGMA journal_mode = DELETE").get()?.journal_mode;
    if (mode !== "delete") throw new Error(`could not take ${path} out of WAL mode (got ${String(mode)})`);
    moveInPlace(file, path);
    return replaced;
  } finally {
    db.close();
  }
}

function moveInPlace(file: string, path: string): void {
  syncPath(file);
  renameSync(file, path);
  syncPath(dirname(path));
}
