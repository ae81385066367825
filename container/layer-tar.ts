// Layers as reproducible tar files: names sorted, one fixed time, numeric owners, no access or change times. The same
// files give the same bytes, so `podman build` reuses a layer whose content has not changed.

import { runTool } from "./run-tool.ts";

export interface LayerEntries {
  /** Paths relative to `dir`, archived with everything under them. */
  paths: string[];
  /** Owner and group of these entries (default 0, root). */
  owner?: number;
  /** Archive only the named entries, not what is under them (a directory with its own owner). */
  noRecursion?: boolean;
  /** Paths (as tar names them, e.g. `./var/lib/x`) to leave out of this group. */
  exclude?: string[];
}

const REPRODUCIBLE = [
  "--sort=name",
  "--mtime=@0",
  "--numeric-owner",
  "--format=posix",
  "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
];

/** Writes `out` from `dir`: each group of entries in order, appended with its owner. */
export async function writeLayerTar(dir: string, out: string, groups: LayerEntries[]): Promise<void> {
  for (const [index, group] of groups.entries()) {
    const owner = String(group.owner ?? 0);
    await runTool("tar", [
      index === 0 ? "--create" : "--append",
      `--file=${out}`,
      ...REPRODUCIBLE,
      `--owner=${owner}`,
      `--group=${owner}`,
      ...(group.noRecursion ? ["--no-recursion"] : []),
      ...(group.exclude ?? []).map((path) => `--exclude=${path}`),
      `--directory=${dir}`,
      "--",
      ...group.paths,
    ]);
  }
}
