// Where a process's resident memory is, from /proc/<pid>/smaps: each mapping's Rss summed by what it is (the node
// binary's code, shared libraries, malloc's heap, anonymous mappings: V8's heap spaces and code, thread stacks,
// SQLite's page cache and TLS buffers live in the last two). Linux only.

import { readFileSync } from "node:fs";

export interface MemoryMap {
  /** KiB by category: "node binary", "shared libraries", "malloc heap", "anonymous", "other files". */
  byCategory: Record<string, number>;
  totalKiB: number;
}

function categoryOf(name: string): string {
  if (name === "[heap]") return "malloc heap ([heap])";
  if (name === "" || name.startsWith("[anon") || name === "[stack]")
    return "anonymous (V8 heap, code, malloc arenas, stacks)";
  if (name.endsWith("/node") || /\/node$/.test(name)) return "node binary (text, data)";
  if (/\.so(\.|$)/.test(name)) return "shared libraries";
  if (name.startsWith("[")) return name;
  return "other files";
}

export function memoryMap(pid: number): MemoryMap {
  const byCategory: Record<string, number> = {};
  let current = "other files";
  let total = 0;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      current = categoryOf(header[1].trim());
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      byCategory[current] = (byCategory[current] ?? 0) + Number(rss[1]);
      total += Number(rss[1]);
    }
  }
  return { byCategory, totalKiB: total };
}
