// Records when access keys are used. Every use is remembered in memory (ttlAfterLastActivity reads it); a key's
// status.lastActivity is written at most once a minute, in the background, never on the request's path.

import type { KeyEntry } from "./auth-index.ts";

export const ACTIVITY_WRITE_INTERVAL_MS = 60_000;

export type ActivityWriter = (key: KeyEntry, at: Date) => Promise<void>;

export class ActivityRecorder {
  private readonly write: ActivityWriter;
  private readonly onError: (error: unknown, key: string) => void;
  /** Last use seen by this process, by key name. */
  private readonly seen = new Map<string, number>();
  /** Last write attempt, by key name (a failing write is not retried on every request). */
  private readonly attempted = new Map<string, number>();

  constructor(write: ActivityWriter, onError: (error: unknown, key: string) => void = () => {}) {
    this.write = write;
    this.onError = onError;
  }

  lastSeen(name: string): number | undefined {
    return this.seen.get(name);
  }

  touch(key: KeyEntry, nowMs: number): void {
    this.seen.set(key.name, nowMs);
    const last = Math.max(key.lastActivityMs ?? 0, this.attempted.get(key.name) ?? 0);
    if (nowMs - last < ACTIVITY_WRITE_INTERVAL_MS) return;
    this.attempted.set(key.name, nowMs);
    this.write(key, new Date(nowMs)).catch((error) => this.onError(error, key.name));
  }

  /** A deleted key is forgotten. */
  forget(name: string): void {
    this.seen.delete(name);
    this.attempted.delete(name);
  }
}
