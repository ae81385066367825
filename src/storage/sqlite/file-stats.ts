// The sizes of a store's files: pages in use, free pages, the WAL. Read by the serving store (SqliteStore.stats)
// and, for `platform store-info` on a stopped platform, from the file itself.

import { existsSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import type { StoreStats } from "../store-stats.ts";
import { autoVacuumMode, fileSize, pragmaNumber } from "./auto-vacuum.ts";
import { openDatabase } from "./schema.ts";

export type FileSizes = Pick<StoreStats, "sizeBytes" | "inUseBytes" | "freeBytes" | "walBytes" | "autoVacuum">;

export function fileSizes(db: DatabaseSync, path: string): FileSizes {
  const pageSize = pragmaNumber(db, "page_size");
  const pages = pragmaNumber(db, "page_count");
  const free = pragmaNumber(db, "freelist_count");
  const onDisk = path !== ":memory:";
  const walBytes = onDisk ? fileSize(`${path}-wal`) : 0;
  return {
    sizeBytes: (onDisk ? fileSize(path) : pages * pageSize) + walBytes,
    inUseBytes: (pages - free) * pageSize,
    freeBytes: free * pageSize,
    walBytes,
    autoVacuum: autoVacuumMode(db),
  };
}

/** The sizes and revisions of the store file at `path`, with no platform serving it (its lock is taken meanwhile). */
export function storeFileStats(path: string): StoreStats {
  if (!existsSync(path)) throw new Error(`there is no store at ${path}`);
  const db = openDatabase(path, "FULL");
  try {
    const sizes = fileSizes(db, path);
    const revision = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'kv'").get();
    const compacted = db.prepare("SELECT value FROM meta WHERE name = 'compacted_revision'").get();
    return {
      backend: "sqlite",
      ...sizes,
      revision: Number(revision?.seq ?? 0),
      compactedRevision: Number(compacted?.value ?? 0),
    };
  } finally {
    db.close();
  }
}
