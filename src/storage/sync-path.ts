// fsync of a file or a directory: a file renamed into place survives a crash only once its data and the directory
// entry are on disk.

import { closeSync, fsyncSync, openSync } from "node:fs";

export function syncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
