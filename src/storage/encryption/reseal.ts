// Bringing every secret value under the primary key: plain values an older version stored, and values sealed by a
// key being rotated out. Every sealed value is opened on the way, so a damaged or forged one is found here (at start)
// rather than when something first reads it. Works on the backend itself (below the EncryptedStore decorator), one compare-and-swap per
// value, so writers may keep writing: a write that raced ahead was already sealed with the primary key.
//
// The superseded versions stay in the log until compaction; callers that must not leave them (start-up migration,
// key rotation) compact afterwards.

import { type KeyValueStore, StorageError, type StoredRecord } from "../types.ts";
import { isEncryptedValue, sealingKeyId, type ValueCipher } from "./value-cipher.ts";

export interface ResealOptions {
  secretPrefixes: readonly string[];
  cipher: ValueCipher;
}

export interface ResealResult {
  /** Values that were stored in plain text. */
  plain: number;
  /** Values that were sealed with a key other than the primary. */
  rekeyed: number;
}

const PAGE = 500;

export async function resealSecretValues(store: KeyValueStore, options: ResealOptions): Promise<ResealResult> {
  const result: ResealResult = { plain: 0, rekeyed: 0 };
  for (const prefix of options.secretPrefixes) {
    let startAfter: string | undefined;
    for (;;) {
      const page = await store.list({ prefix, limit: PAGE, startAfter });
      for (const record of page.records) await reseal(store, record, options.cipher, result);
      if (page.remaining === 0 || page.records.length === 0) break;
      startAfter = page.records[page.records.length - 1].key;
    }
  }
  return result;
}

async function reseal(
  store: KeyValueStore,
  first: StoredRecord,
  cipher: ValueCipher,
  result: ResealResult,
): Promise<void> {
  let record: StoredRecord | undefined = first;
  while (record) {
    const plain = !isEncryptedValue(record.value);
    const value = plain ? record.value : cipher.open(record.key, record.value);
    if (sealingKeyId(record.value) === cipher.primaryKeyId) return;
    try {
      await store.update(record.key, cipher.seal(record.key, value), record.revision);
      if (plain) result.plain++;
      else result.rekeyed++;
      return;
    } catch (error) {
      // Written or deleted meanwhile: look again (a concurrent write was sealed with the primary key already).
      if (!(error instanceof StorageError) || !["Conflict", "NotFound"].includes(error.storageCode)) throw error;
      record = await store.get(record.key);
    }
  }
}
