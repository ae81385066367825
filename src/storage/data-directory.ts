// A server's data directory: made on first start (the owner's alone), and when it cannot be, one sentence that names
// the path and what is wrong, never a raw errno about a file the user did not name.

import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";

export class DataDirectoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataDirectoryError";
  }
}

/** The nearest ancestor of `path` that exists, or undefined. */
async function nearestExisting(path: string): Promise<{ path: string; isDirectory: boolean } | undefined> {
  for (let current = path; ; current = dirname(current)) {
    const stats = await stat(current).catch(() => undefined);
    if (stats) return { path: current, isDirectory: stats.isDirectory() };
    if (dirname(current) === current) return undefined;
  }
}

/**
 * Refuses, with a DataDirectoryError, a data directory that cannot be one: an existing file, or a path below one.
 * A missing directory is fine (ensureDataDirectory makes it).
 */
export async function checkDataDirectory(dataDir: string, flag = "--data-dir"): Promise<void> {
  const existing = await nearestExisting(dataDir);
  if (!existing || existing.isDirectory) return;
  throw new DataDirectoryError(
    existing.path === dataDir
      ? `${flag} ${dataDir} is a file, not a directory: give a directory (it is created when missing)`
      : `${flag} ${dataDir} cannot be created: ${existing.path} is a file, not a directory`,
  );
}

/** Makes the data directory (mode 0700, parents too) after checkDataDirectory's checks. */
export async function ensureDataDirectory(dataDir: string, flag = "--data-dir"): Promise<void> {
  await checkDataDirectory(dataDir, flag);
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") {
      throw new DataDirectoryError(`${flag} ${dataDir} cannot be created: permission denied (${code})`);
    }
    throw error;
  }
}
