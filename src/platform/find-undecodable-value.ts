// The platform's stored values are JSON objects. A value that does not decode means the store is damaged; finding
// it before anything reads the store turns a start that would fail on a bare JSON error (or serve 500s later) into
// one line naming the key.

import { isEncryptedValue } from "../storage/encryption/value-cipher.ts";
import type { KeyValueStore } from "../storage/types.ts";

export interface UndecodableValue {
  key: string;
  revision: number;
}

const PAGE = 5000;

/**
 * The first live key whose value is not a JSON object, reading the whole store at one revision. A sealed secret
 * value (src/storage/encryption/) counts as decodable here: only its key can check it, and opening one that was
 * damaged fails its authentication (the platform opens every one at start).
 */
export async function findUndecodableValue(store: KeyValueStore): Promise<UndecodableValue | undefined> {
  const revision = await store.currentRevision();
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.list({ prefix: "/", limit: PAGE, startAfter, revision });
    for (const record of page.records) {
      if (!isEncryptedValue(record.value) && !decodes(record.value))
        return { key: record.key, revision: record.revision };
    }
    if (page.remaining === 0 || page.records.length === 0) return undefined;
    startAfter = page.records[page.records.length - 1].key;
  }
}

function decodes(value: string): boolean {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}
