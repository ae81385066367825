// Deleting a key that another process may delete (or change) first: losing that race is no error.

import { type KeyValueStore, StorageError } from "./types.ts";

/**
 * Deletes `key` (with `revision`: only that version of it); true when this call deleted it, false when it was gone
 * already or, with a revision, changed meanwhile.
 */
export async function deleteIfPresent(storage: KeyValueStore, key: string, revision?: number): Promise<boolean> {
  try {
    await storage.delete(key, revision);
    return true;
  } catch (error) {
    if (error instanceof StorageError && (error.storageCode === "NotFound" || error.storageCode === "Conflict")) {
      return false;
    }
    throw error;
  }
}
