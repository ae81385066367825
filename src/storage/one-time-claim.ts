// One-time jobs of a store shared by several processes (the first start of platform replicas on one etcd): the
// process whose create of the claim key wins does the job; the others wait for its result. A claim older than
// `staleMs` belongs to a process that died half-way and is taken over.

import { type KeyValueStore, StorageError } from "./types.ts";

export interface ClaimOptions {
  storage: KeyValueStore;
  key: string;
  /** After this long a claim is presumed abandoned (default 60 s). */
  staleMs?: number;
  now?: () => number;
}

/** True when this process holds the claim and should do the job. */
export async function claimOneTimeJob(options: ClaimOptions): Promise<boolean> {
  const { storage, key } = options;
  const now = options.now ?? Date.now;
  const value = JSON.stringify({ claimedAt: now(), pid: process.pid });
  try {
    await storage.create(key, value);
    return true;
  } catch (error) {
    if (!(error instanceof StorageError && error.storageCode === "KeyExists" && error.current)) throw error;
    const held = error.current;
    const claimedAt = Number((JSON.parse(held.value) as { claimedAt?: number }).claimedAt ?? 0);
    if (now() - claimedAt < (options.staleMs ?? 60_000)) return false;
    try {
      await storage.update(key, value, held.revision);
      return true;
    } catch (lost) {
      if (lost instanceof StorageError && (lost.storageCode === "Conflict" || lost.storageCode === "NotFound")) {
        return false;
      }
      throw lost;
    }
  }
}

/** Polls `check` until it answers something (the claim holder finished), or fails after `timeoutMs`. */
export async function waitForOneTimeJob<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`${what} was claimed by another replica that did not finish it`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
