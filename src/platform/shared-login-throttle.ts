// Login throttling across replicas: each replica's LoginThrottle keeps answering from memory (no store read on the
// login path), and every failure or success is also counted in the store (/internal/login-failures/, a
// compare-and-swap increment), whose watch brings every replica the shared count. So five wrong passwords spread over
// three replicas lock a username as five on one would. On SQLite there is one process and nothing to share.

import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { LoginThrottle, ThrottleChange } from "../auth/login-throttle.ts";
import { StoreInformer } from "../auth/store-informer.ts";
import { type KeyValueStore, StorageError, type StoredRecord, type WatchEvent } from "../storage/types.ts";

export const LOGIN_FAILURES_PREFIX = "/internal/login-failures/";
const ATTEMPTS = 10;
/** A stored count older than this starts again from zero (LoginThrottle's default forgetAfterSeconds). */
const FORGET_AFTER_MS = 3_600_000;

interface StoredCount {
  counter: ThrottleChange["counter"];
  id: string;
  failures: number;
  lastMs: number;
}

const keyOf = (change: { counter: string; id: string }) =>
  `${LOGIN_FAILURES_PREFIX}${change.counter}/${createHash("sha256").update(change.id).digest("hex")}`;

export async function shareLoginThrottle(options: {
  storage: KeyValueStore;
  throttle: LoginThrottle;
  logger?: Logger;
}): Promise<{ close(): void }> {
  const { storage, throttle, logger } = options;
  const applyRecord = (record: StoredRecord) => {
    const count = JSON.parse(record.value) as StoredCount;
    throttle.apply(count.counter, count.id, count.failures, count.lastMs);
  };
  const informer = new StoreInformer(
    storage,
    {
      prefixes: [LOGIN_FAILURES_PREFIX],
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
  throttle.onChange((change) => {
    record(storage, change).catch((error) =>
      logger?.warn({ err: String(error) }, "storing a login failure count failed"),
    );
  });
  return { close: () => informer.stop() };
}

/** One more failure (compare-and-swap increment), or the count cleared. */
async function record(storage: KeyValueStore, change: ThrottleChange): Promise<void> {
  const key = keyOf(change);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await storage.get(key);
    try {
      if (!change.failed) {
        if (current) await storage.delete(key, current.revision);
        return;
      }
      const stored = current ? (JSON.parse(current.value) as StoredCount) : undefined;
      const recent = stored && change.at - stored.lastMs < FORGET_AFTER_MS;
      const failures = (recent ? stored.failures : 0) + 1;
      const value = JSON.stringify({ counter: change.counter, id: change.id, failures, lastMs: change.at });
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
