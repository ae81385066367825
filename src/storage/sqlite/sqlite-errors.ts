// The SQLite failures a caller can act on, as StorageErrors naming the file: out of space (SQLITE_FULL, which the
// OS's ENOSPC on a write becomes, and SQLite's page cap) and a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB).
// Anything else is left as it is: a server fault.

import { StorageError } from "../types.ts";

const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_NOTADB = 26;

/** SQLite's primary result code of a node:sqlite error (extended codes carry it in the low byte). */
function primaryCode(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { errcode?: unknown }).errcode;
  return typeof code === "number" ? code & 0xff : undefined;
}

/** NoSpace or Corrupt for the failures that mean it; the error unchanged otherwise. */
export function toStorageError(error: unknown, path: string): unknown {
  if (error instanceof StorageError) return error;
  const code = primaryCode(error);
  const reason = (error as { errstr?: string; message?: string } | undefined)?.errstr ?? String(error);
  if (code === SQLITE_FULL) {
    return new StorageError("NoSpace", `storage ${path} is out of space: ${reason}`, {}, { cause: error });
  }
  if (code === SQLITE_CORRUPT || code === SQLITE_NOTADB) {
    return new StorageError("Corrupt", `storage ${path} is corrupt: ${reason}`, {}, { cause: error });
  }
  return error;
}
