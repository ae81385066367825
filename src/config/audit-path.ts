// Where the audit log may be written. A Config may be written by anyone allowed to edit it, and the platform process
// writes, rotates and deletes files at audit.path with its own rights: the path must stay inside a directory the
// operator allowed (the data directory, and any given with --audit-dir), with no `..` segment to walk out of it.
// The check is by name: a symbolic link inside an allowed directory is the operator's own choice.

import { isAbsolute, relative, resolve, sep } from "node:path";

/** Why `path` may not hold the audit log, or undefined when it may. `allowed`: absolute directories. */
export function auditPathProblem(path: string, allowed: readonly string[]): string | undefined {
  const where = allowed.join(", ");
  if (!isAbsolute(path)) return `must be an absolute path inside ${where}`;
  if (path.split(/[\\/]/).includes("..")) return `must not contain ".." segments; use a path inside ${where}`;
  const inside = allowed.some((dir) => {
    const rel = relative(resolve(dir), resolve(path));
    return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
  });
  return inside
    ? undefined
    : `must be inside ${where} (start the platform with --audit-dir to allow another directory)`;
}
