// Login throttling across replicas: each replica's LoginThrottle keeps answering from memory (no store read on the
// login path), and every failure or success that cleared a count is also counted in the store
// (/internal/login-failures/, a compare-and-swap increment), whose watch brings every replica the shared count. So
// five wrong passwords spread over three replicas lock a username as five on one would. The OpenID provider's
// throttle of wrong client secrets shares its counts the same way under /internal/client-auth-failures/. A count
// expires an hour after its last failure (the leader's sweeper deletes it). A replica writes one count at a time per
// key and folds the changes that arrive meanwhile into its next write, so a burst of failures costs a few writes and
// loses none to its own compare-and-swap conflicts. On SQLite there is one process and nothing to share.

import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { LoginThrottle, ThrottleChange } from "../auth/login-throttle.ts";
import { StoreInformer } from "../auth/store-informer.ts";
import { type KeyValueStore, StorageError, type StoredRecord, type WatchEvent } from "../storage/types.ts";

export const LOGIN_FAILURES_PREFIX = "/internal/login-failures/";
export const CLIENT_AUTH_FAILURES_PREFIX = "/internal/client-auth-failures/";
const ATTEMPTS = 10;
/** A stored count older than this starts again from zero (LoginThrottle's default forgetAfterSeconds). */
const FORGET_AFTER_MS = 3_600_000;

interface StoredCount {
  counter: ThrottleChange["counter"];
  id: string;
  failures: number;
  lastMs: number;
  /** When the count is forgotten (the sweeper deletes it), epoch ms. */
  expiresAt: number;
}

const keyOf = (prefix: string, change: { counter: string; id: string }) =>
  `${prefix}${change.counter}/${createHash("sha256").update(change.id).digest("hex")}`;

export async function shareLoginThrottle(options: {
  storage: KeyValueStore;
  throttle: LoginThrottle;
  /** Where the counts live (default LOGIN_FAILURES_PREFIX). */
  prefix?: string;
  logger?: Logger;
}): Promise<{ close(): void }> {
  const { storage, throttle, logger } = options;
  const prefix = options.prefix ?? LOGIN_FAILURES_PREFIX;
  const applyRecord = (record: StoredRecord) => {
    const count = JSON.parse(record.value) as StoredCount;
    throttle.apply(count.counter, count.id, count.failures, count.lastMs);
  };
  const informer = new StoreInformer(
    storage,
    {
      prefixes: [prefix],
      reset: (records) => records.forEach(applyRecord),
      apply: (event: WatchEvent) => {
        if (event.type !== "delete") applyRecord(event.record);
        else if (event.previous) {
          const gone = JSON.parse(event.previous.value) as StoredCount;
          throttle.apply(gone.counter, gone.id, 0, 0);
        }
      },
    },
    (error) => logger?.warn({ err: String(error) }, "shared login throttle update failed"),
  );
  await informer.start();
  /** Changes not written yet, by key; a key is in `writing` while its writer runs. */
  const due = new Map<string, Pending>();
  const writing = new Set<string>();
  const write = async (key: string) => {
    writing.add(key);
    try {
      for (let next = due.get(key); next; next = due.get(key)) {
        due.delete(key);
        await record(storage, key, next).catch((error) =>
          logger?.warn({ err: String(error) }, "storing a login failure count failed"),
        );
      }
    } finally {
      writing.delete(key);
    }
  };
  throttle.onChange((change) => {
    const key = keyOf(prefix, change);
    const pending = due.get(key);
    // A success clears what came before it; failures add up.
    if (!change.failed) due.set(key, { change, cleared: true, failures: 0 });
    else if (pending) due.set(key, { change, cleared: pending.cleared, failures: pending.failures + 1 });
    else due.set(key, { change, cleared: false, failures: 1 });
    if (!writing.has(key)) void write(key);
  });
  return { close: () => informer.stop() };
}

/** What one write stores: the last change, whether the count was cleared first, and the failures since. */
interface Pending {
  change: ThrottleChange;
  cleared: boolean;
  failures: number;
}

/** The stored count plus the failures since (compare-and-swap), or deleted when cleared with none since. */
async function record(storage: KeyValueStore, key: string, pending: Pending): Promise<void> {
  const { change } = pending;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await storage.get(key);
    try {
      if (pending.failures === 0) {
        if (current) await storage.delete(key, current.revision);
        return;
      }
      const stored = current && !pending.cleared ? (JSON.parse(current.value) as StoredCount) : undefined;
      const recent = stored && change.at - stored.lastMs < FORGET_AFTER_MS;
      const failures = (recent ? stored.failures : 0) + pending.failures;
      const lastMs = Math.max(change.at, recent ? stored.lastMs : 0);
      const value = JSON.stringify({
        counter: change.counter,
        id: change.id,
        failures,
        lastMs,
        expiresAt: lastMs + FORGET_AFTER_MS,
      } satisfies StoredCount);
      if (current) await storage.update(key, value, current.revision);
      else await storage.create(key, value);
      return;
    } catch (error) {
      if (!(error instanceof StorageError && ["Conflict", "KeyExists", "NotFound"].includes(error.storageCode))) {
        throw error;
      }
    }
  }
}
