// The platform's audit directories: `<data-dir>/audit` (made at start), or the ones given with --audit-dir. They hold
// audit logs and nothing of the platform's own: a directory that is, holds or lies inside the platform's keys (pki/,
// a key file given elsewhere), its store or its control socket is refused at start, links resolved, so that no
// Config can make the audit log write, rotate or delete one of those (src/config/audit-path.ts checks each path).

import { mkdirSync, realpathSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { isWithin, realLocation, resolveAuditPath } from "../config/audit-path.ts";
import { CONTROL_SOCKET_FILE, STORE_FILE } from "./store-files.ts";

/** The default audit directory inside the data directory. */
export const AUDIT_DIR = "audit";

export interface AuditDirectoryOptions {
  dataDir: string;
  /** --audit-dir: replaces the default. */
  given?: readonly string[];
  /** Key and certificate files outside pki/ (--encryption-key-file, --tls-key, --tls-cert). */
  keyFiles?: readonly string[];
}

/** Makes the audit directories and returns them resolved; throws one line when one overlaps the platform's files. */
export function auditDirectories(options: AuditDirectoryOptions): string[] {
  const dataDir = resolve(options.dataDir);
  const wanted = options.given?.length ? options.given.map((dir) => resolve(dir)) : [join(dataDir, AUDIT_DIR)];
  const store = join(dataDir, STORE_FILE);
  const guarded = [
    { path: join(dataDir, "pki"), what: "the platform's keys and certificates" },
    ...["", "-wal", "-shm", "-journal"].map((suffix) => ({ path: `${store}${suffix}`, what: "the store" })),
    { path: join(dataDir, CONTROL_SOCKET_FILE), what: "the control socket" },
    ...(options.keyFiles ?? []).map((file) => ({ path: resolve(file), what: "a key file" })),
  ].map((entry) => ({ ...entry, real: realLocation(entry.path) }));
  const overlap = (dir: string) => {
    const real = realLocation(dir);
    const clash = guarded.find((entry) => isWithin(real, entry.real) || isWithin(entry.real, real));
    if (!clash) return;
    const flag = options.given?.length ? `--audit-dir ${dir}` : `the audit directory ${dir}`;
    throw new Error(`${flag} overlaps ${clash.path} (${clash.what}): give the audit log a directory of its own`);
  };
  // Every directory is checked before any is made, and again once made (its links resolved for good).
  for (const dir of wanted) overlap(dir);
  return wanted.map((dir) => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    overlap(dir);
    return realpathSync(dir);
  });
}

/**
 * The file a stored Config's audit.path writes to. A path the API would refuse now (earlier versions allowed any
 * absolute path in the data directory) is kept to its file name in the first audit directory, with a warning, so
 * the log goes on where it is safe instead of stopping; the next write of the Config must name an allowed path.
 */
export function auditFileOf(path: string, dirs: readonly string[], warn: (message: string) => void): string {
  const resolved = resolveAuditPath(path, dirs);
  if (resolved.path !== undefined) return resolved.path;
  const moved = join(dirs[0], basename(path) || "audit.log");
  warn(`audit.path ${path} ${resolved.problem}; writing the audit log to ${moved} instead`);
  return moved;
}
