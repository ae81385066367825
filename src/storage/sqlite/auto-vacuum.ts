// Converting a store file made before incremental auto-vacuum. SQLite can change a file's auto_vacuum mode from
// NONE only by rebuilding it (VACUUM), which holds the connection for the whole copy, so it runs once, at open,
// before the store serves, and only up to a size bound: a larger file keeps working (freed pages are reused by
// later writes, just never returned) until it is converted with the platform stopped.

import { existsSync, statfsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { formatBytes } from "../../utils/byte-size.ts";
import { openDatabase } from "./schema.ts";

/** Files up to this size are converted at open (about 10-30 s of VACUUM on an ordinary disk). */
export const DEFAULT_CONVERT_MAX_BYTES = 1024 * 1024 * 1024;

export type AutoVacuumMode = "incremental" | "none";

export interface ConversionEvent {
  /** started: about to VACUUM; converted: done; skipped: left as it is (see reason). */
  phase: "started" | "converted" | "skipped";
  path: string;
  /** The file's size before (and, once converted, after). */
  bytesBefore: number;
  bytesAfter?: number;
  durationMs?: number;
  reason?: string;
}

export function autoVacuumMode(db: DatabaseSync): AutoVacuumMode {
  return pragmaNumber(db, "auto_vacuum") === 2 ? "incremental" : "none";
}

/**
 * Makes `db` an incremental auto-vacuum file if it is not one yet: a no-op for new files (schema.ts creates them so),
 * one VACUUM for an older file no larger than `maxBytes` with room on its file system for the copy (the rebuilt file
 * passes through the WAL). `report` hears of every decision. Returns the mode the file has afterwards.
 */
export function ensureIncrementalVacuum(
  db: DatabaseSync,
  path: string,
  options: { maxBytes: number; report?: (event: ConversionEvent) => void },
): AutoVacuumMode {
  if (autoVacuumMode(db) === "incremental" || path === ":memory:") return autoVacuumMode(db);
  const pageSize = pragmaNumber(db, "page_size");
  const bytesBefore = pragmaNumber(db, "page_count") * pageSize;
  const skip = (reason: string): AutoVacuumMode => {
    options.report?.({ phase: "skipped", path, bytesBefore, reason });
    return "none";
  };
  if (bytesBefore > options.maxBytes) {
    return skip(`the file is larger than the ${formatBytes(options.maxBytes)} converted at start`);
  }
  const lacking = lackOfRoom(path, bytesBefore);
  if (lacking) return skip(lacking);
  rebuild(db, path, bytesBefore, options.report);
  return autoVacuumMode(db);
}

/**
 * Rebuilds the store file at `path` with no platform serving it (its lock is taken): one VACUUM that converts it to
 * incremental vacuum if it is not yet, and leaves no free page. Resolves to what it did.
 */
export function vacuumStoreFile(path: string): ConversionEvent {
  if (!existsSync(path)) throw new Error(`there is no store at ${path}`);
  const db = openDatabase(path, "FULL");
  try {
    const bytesBefore = statSync(path).size + fileSize(`${path}-wal`);
    const lacking = lackOfRoom(path, bytesBefore);
    if (lacking) throw new Error(`cannot vacuum ${path}: ${lacking}`);
    const events: ConversionEvent[] = [];
    rebuild(db, path, bytesBefore, (event) => events.push(event));
    return events[events.length - 1];
  } finally {
    db.close();
  }
}

/**
 * Rebuilds the open store file in place (one VACUUM on the serving connection, between two macrotasks: every
 * transaction of the store begins and ends within one, so none is open). It holds the event loop for the whole
 * copy, so the platform runs it only inside the maintenance window. Throws when the file system lacks room.
 */
export function rebuildOpenStoreFile(db: DatabaseSync, path: string): ConversionEvent {
  const bytesBefore = statSync(path).size + fileSize(`${path}-wal`);
  const lacking = lackOfRoom(path, bytesBefore);
  if (lacking) throw new Error(`cannot rebuild ${path}: ${lacking}`);
  const events: ConversionEvent[] = [];
  rebuild(db, path, bytesBefore, (event) => events.push(event));
  return events[events.length - 1];
}

/** Why the file system cannot take the rebuilt copy (in a temporary file) and the WAL holding it, if it cannot. */
function lackOfRoom(path: string, bytes: number): string | undefined {
  const fs = statfsSync(dirname(path));
  const free = fs.bavail * fs.bsize;
  const needed = 2 * bytes + 16 * 1024 * 1024;
  if (free >= needed) return undefined;
  return `its file system has ${formatBytes(free)} free, the rebuild needs ${formatBytes(needed)}`;
}

function rebuild(db: DatabaseSync, path: string, bytesBefore: number, report?: (event: ConversionEvent) => void): void {
  report?.({ phase: "started", path, bytesBefore });
  const started = performance.now();
  // The temporary copy goes to a file, not memory: the store's connection keeps its temp tables in memory.
  db.exec("PRAGMA temp_store = FILE");
  try {
    db.exec("PRAGMA auto_vacuum = INCREMENTAL; VACUUM");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.exec("PRAGMA temp_store = MEMORY");
  }
  report?.({
    phase: "converted",
    path,
    bytesBefore,
    bytesAfter: statSync(path).size + fileSize(`${path}-wal`),
    durationMs: performance.now() - started,
  });
}

/** A file's size; 0 when it does not exist (no WAL right now). */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function pragmaNumber(db: DatabaseSync, name: string): number {
  return Number(Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0] ?? 0);
}
