// What the image is made of, as one content hash: the tag `inputs-<hash>` names the image built from exactly these
// files, so a build whose inputs have not changed reuses it (tests build once per change, not once per run). Test
// files and the README are left out: they are not in the image.

import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** Files and folders (relative to the checkout) whose content goes into the image. */
export const IMAGE_INPUTS: readonly string[] = [
  "bin",
  "src",
  "console",
  "container",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "LICENSE",
];

const notShipped = (path: string) => /\.test\.ts$|(^|\/)node_modules(\/|$)/.test(path);

function filesUnder(repo: string, path: string): string[] {
  const full = join(repo, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(repo, join(entry.parentPath, entry.name)))
    .filter((file) => !notShipped(file));
}

/**
 * sha256 over the path and content of every input file (sorted), plus `extra` (e.g. the Debian sources the base
 * layer comes from): hex.
 */
export function imageInputsHash(repo: string, extra: string[] = []): string {
  const hash = createHash("sha256");
  const files = IMAGE_INPUTS.flatMap((path) => filesUnder(repo, path)).sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(repo, file)));
    hash.update("\0");
  }
  for (const value of extra) hash.update(`${value}\0`);
  return hash.digest("hex");
}
