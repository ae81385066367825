// The data directory holds the store, the signing and CA private keys and the admin credentials: anyone who can
// read it can act as the admin. Like ssh and etcd, the platform refuses to start on a data directory (or a key
// file) that group or others may read or write, and creates everything in it for its owner alone.

import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";

/** Bits that let group or others in. */
const OPEN_BITS = 0o077;
/** Sub-folders of the data directory whose files are checked too (the PKI keys live in pki/). */
const CHECKED_FOLDERS = ["pki"];

export class InsecurePermissionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InsecurePermissionsError";
  }
}

/**
 * Every file the process creates from now on is its owner's alone (SQLite's store, WAL and shared-memory files are
 * created with the process umask). Only the main thread may change it; workers inherit it.
 */
export function restrictUmask(): void {
  if (isMainThread) process.umask(process.umask() | OPEN_BITS);
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, "0");

/**
 * Throws InsecurePermissionsError naming the first path group or others may use, and the fix: the data directory,
 * its pki/ folder, the files in both, and any extra key files (a --tls-key). A missing data directory is fine (it is
 * created 0700).
 */
export async function checkDataDirPermissions(dataDir: string, keyFiles: readonly string[] = []): Promise<void> {
  const open: { path: string; mode: number }[] = [];
  const inspect = async (path: string): Promise<boolean> => {
    // Followed: a data directory (or key) may be a symbolic link to a volume, whose own mode bits mean nothing.
    const stats = await stat(path).catch(() => undefined);
    if (!stats) return false;
    if ((stats.mode & OPEN_BITS) !== 0) open.push({ path, mode: stats.mode });
    return stats.isDirectory();
  };
  if (await inspect(dataDir)) {
    for (const folder of [dataDir, ...CHECKED_FOLDERS.map((name) => join(dataDir, name))]) {
      const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (entry.isFile() || entry.isDirectory()) await inspect(join(folder, entry.name));
      }
    }
  }
  for (const file of keyFiles) await inspect(file);
  const first = open[0];
  if (!first) return;
  const others = open.length > 1 ? ` (and ${open.length - 1} more)` : "";
  const inDataDir = first.path === dataDir || first.path.startsWith(`${dataDir}/`);
  const fix = inDataDir ? `chmod -R go-rwx ${dataDir}` : `chmod 600 ${first.path}`;
  throw new InsecurePermissionsError(
    `${first.path} can be read or written by group or others (mode ${octal(first.mode)})${others}: it holds the ` +
      `platform's keys and store; run "${fix}", or start with --allow-insecure-permissions`,
  );
}
