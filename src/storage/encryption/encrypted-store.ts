// A KeyValueStore decorator that keeps the values of secret keys encrypted in the backend (see value-cipher.ts).
// Callers read and write plain values; the backend, its files, its backups and its history only ever hold sealed
// ones. Keys outside the secret prefixes pass through untouched, so the hot paths (objects, access keys) pay one
// prefix test per call and nothing else.
//
// A secret key whose stored value cannot be opened (plain text, an unknown key id, tampering) is an error on read:
// the store never hands out unauthenticated secret material. Plain values left by an older version are sealed by
// sealPlainValues() before the decorator is used (see src/platform/encryption.ts).

import { type KeyValueStore, StorageError, type StoredRecord, type WatchEvent, type WatchOptions } from "../types.ts";
import type { ValueCipher } from "./value-cipher.ts";

export interface EncryptedStoreOptions {
  /** Key prefixes whose values are secret. */
  secretPrefixes: readonly string[];
  /** Seals and opens values; swapped by a key rotation (the decorator reads it on every call). */
  cipher: () => ValueCipher;
}

export interface EncryptedStore extends KeyValueStore {
  /** Whether values of this key are stored encrypted. */
  isSecret(key: string): boolean;
}

export function encryptSecretValues(store: KeyValueStore, options: EncryptedStoreOptions): EncryptedStore {
  const prefixes = [...options.secretPrefixes];
  const isSecret = (key: string): boolean => {
    for (const prefix of prefixes) if (key.startsWith(prefix)) return true;
    return false;
  };
  /** Whether a range starting with `prefix` can hold a secret key. */
  const overlaps = (prefix: string): boolean => prefixes.some((p) => p.startsWith(prefix) || prefix.startsWith(p));
  const open = (record: StoredRecord): StoredRecord =>
    isSecret(record.key) ? { ...record, value: options.cipher().open(record.key, record.value) } : record;
  /** An event of a non-secret key is passed on as it is (watchers of "/", such as the garbage collector, see all). */
  const openEvent = (event: WatchEvent): WatchEvent =>
    isSecret(event.record.key)
      ? {
          type: event.type,
          record: open(event.record),
          ...(event.previous ? { previous: open(event.previous) } : {}),
        }
      : event;
  /** A CAS failure carries the current record: it must not leak the sealed form either. */
  const openError = (error: unknown): never => {
    if (error instanceof StorageError && error.current && isSecret(error.current.key)) {
      throw new StorageError(error.storageCode, error.message, {
        current: open(error.current),
        compactedRevision: error.compactedRevision,
      });
    }
    throw error;
  };
  /** The backend's record of a write, with the plain value the caller wrote. */
  const written = (record: StoredRecord, value: string): StoredRecord => ({ ...record, value });

  return {
    isSecret,
    currentRevision: () => store.currentRevision(),
    ...(store.revisionNow ? { revisionNow: () => store.revisionNow!() } : {}),
    compactedRevision: () => store.compactedRevision(),
    async get(key) {
      const record = await store.get(key);
      return record && isSecret(key) ? open(record) : record;
    },
    async list(listOptions) {
      const result = await store.list(listOptions);
      return overlaps(listOptions.prefix) ? { ...result, records: result.records.map(open) } : result;
    },
    count: (prefix) => store.count(prefix),
    create(key, value) {
      if (!isSecret(key)) return store.create(key, value);
      return store.create(key, options.cipher().seal(key, value)).then((r) => written(r, value), openError);
    },
    update(key, value, revision) {
      if (!isSecret(key)) return store.update(key, value, revision);
      return store.update(key, options.cipher().seal(key, value), revision).then((r) => written(r, value), openError);
    },
    ...(store.updateChain
      ? {
          updateChain(key: string, values: string[], revision: number) {
            if (!isSecret(key)) return store.updateChain!(key, values, revision);
            const cipher = options.cipher();
            const sealed = values.map((value) => cipher.seal(key, value));
            return store.updateChain!(key, sealed, revision).then(
              (records) => records.map((r, i) => written(r, values[i])),
              openError,
            );
          },
        }
      : {}),
    delete(key, revision) {
      if (!isSecret(key)) return store.delete(key, revision);
      return store.delete(key, revision).then(open, openError);
    },
    watch(watchOptions: WatchOptions) {
      if (!overlaps(watchOptions.prefix)) return store.watch(watchOptions);
      let ended = false;
      const watcher = store.watch({
        ...watchOptions,
        onEvents(events) {
          if (ended) return true;
          let opened: WatchEvent[];
          try {
            opened = events.map(openEvent);
          } catch {
            // A value that does not open: end the watch; the consumer's re-list reports the error.
            ended = true;
            queueMicrotask(() => watcher.close());
            watchOptions.onClose({ kind: "closed" });
            return true;
          }
          return watchOptions.onEvents(opened);
        },
        onClose(reason) {
          if (ended) return;
          ended = true;
          watchOptions.onClose(reason);
        },
      });
      return watcher;
    },
    compact: (keep) => store.compact(keep),
    // Space and snapshots concern the backend's files, which hold only sealed secret values.
    ...(store.checkSpace ? { checkSpace: () => store.checkSpace!() } : {}),
    ...(store.snapshot ? { snapshot: (file: string) => store.snapshot!(file) } : {}),
    ...(store.stats ? { stats: () => store.stats!() } : {}),
    ...(store.statsVersion ? { statsVersion: () => store.statsVersion!() } : {}),
    ...(store.rebuild ? { rebuild: () => store.rebuild!() } : {}),
    close: () => store.close(),
  };
}
