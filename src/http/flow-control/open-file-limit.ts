// The process's open-file limit (RLIMIT_NOFILE, soft), from which the connection caps take their defaults: every
// connection is a file descriptor, and a server out of descriptors can open neither its store nor a health answer.
// Read from /proc/self/limits (Linux); elsewhere, or when unreadable, the common default of 1024.

import { readFileSync } from "node:fs";

export const FALLBACK_OPEN_FILE_LIMIT = 1024;

/** "Max open files  1024  1048576  files" -> 1024 (the soft limit, which is what the process may use). */
export function parseOpenFileLimit(limits: string): number | undefined {
  const match = /^Max open files\s+(\S+)\s+\S+/m.exec(limits);
  if (!match) return undefined;
  if (match[1] === "unlimited") return Number.MAX_SAFE_INTEGER;
  const value = Number(match[1]);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

export function openFileLimit(read: () => string = () => readFileSync("/proc/self/limits", "utf8")): number {
  try {
    return parseOpenFileLimit(read()) ?? FALLBACK_OPEN_FILE_LIMIT;
  } catch {
    return FALLBACK_OPEN_FILE_LIMIT;
  }
}
