// Where the audit log may be written. A Config may be written by anyone allowed to edit it, and the platform process
// writes, rotates and deletes files at audit.path with its own rights: the file must lie in an audit directory
// (`<data-dir>/audit`, or the ones given with --audit-dir), which the platform checked at start never overlaps its
// keys, store or control socket. A relative path is taken inside the first audit directory; no `..` segment is
// accepted, and symbolic links are followed before the check (a link inside the directory that leads out of it is
// refused, as is a file that is itself a link).

import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";

export type AuditPathResolution = { path: string; problem?: undefined } | { path?: undefined; problem: string };

/** Whether `path` is `dir` or lies below it (both absolute, resolved). */
export function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`));
}

/** The path with symbolic links resolved as far as it exists; the part that does not exist yet is kept as given. */
export function realLocation(path: string): string {
  let existing = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(existing), ...rest);
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return path;
      rest.unshift(basename(existing));
      existing = parent;
    }
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The file a Config's audit.path names, or why it may not hold the audit log. `dirs`: the audit directories,
 * absolute with links resolved; the first takes relative paths.
 */
export function resolveAuditPath(path: string, dirs: readonly string[]): AuditPathResolution {
  const where = dirs.join(", ");
  if (path.split(/[\\/]/).includes("..")) {
    return {
      problem: `must not contain ".." segments: use a file name (taken inside ${dirs[0]}) or a path inside ${where}`,
    };
  }
  const file = isAbsolute(path) ? path : join(dirs[0], path);
  const real = join(realLocation(dirname(file)), basename(file));
  const inside = dirs.some((dir) => real !== dir && isWithin(real, dir));
  if (!inside) {
    return {
      problem: `must be a file inside the audit directory ${where} (a relative path is taken inside ${dirs[0]}; start the platform with --audit-dir to use another directory)`,
    };
  }
  if (isSymlink(file))
    return { problem: `is a symbolic link: the audit log writes only a file of its own in ${where}` };
  return { path: real };
}
