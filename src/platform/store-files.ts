// Where the platform keeps its store in the data directory, and what an operator is told when it is damaged.

import { join } from "node:path";

/** The SQLite database of the platform's store. */
export const STORE_FILE = "platform.db";
/** The Unix socket a running platform answers `platform backup` on (owner-only, inside the 0700 data directory). */
export const CONTROL_SOCKET_FILE = "platform.sock";
/** The key of secret values encrypted at rest; like pki/ca.key it lives beside the store, never in it. */
export const ENCRYPTION_KEY_FILE = join("pki", "encryption.key");

/** The way out of a damaged store, for the end of a one-line error. */
export function restoreAdvice(dataDir: string): string {
  return `restore the data directory from a backup: virtualcluster platform restore --from FILE --data-dir ${dataDir} --force`;
}
