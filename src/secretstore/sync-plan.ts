// What one sync of a secret does, decided from three facts: the version of the store's copy now, the version the
// platform and the store last agreed on, and whether the platform's values changed since (the object's generation
// against the generation that agreement recorded).
//
// The conflict rule: the store wins. A version written in the store since the last agreement replaces the
// platform's values, even when they changed on the platform meanwhile (that change is overwritten and the Synced
// condition says so, reason StoreWon); the platform writes only with check-and-set on the agreed version, so it never
// overwrites a store write it has not seen. Existence is the platform's: a secret missing from the store (never
// written, or deleted there) is written from the platform; deleting the ProjectSecret deletes it in the store.

import type { KvSecret } from "./vault-kv.ts";

export interface PlatformSide {
  generation: number;
  /** The generation whose values the store's agreed version holds (absent: never agreed). */
  observedGeneration?: number;
  /** The agreed store version (absent: never agreed). */
  agreedVersion?: number;
  data: Record<string, string>;
}

export type SyncPlan =
  | { action: "none" }
  /** Write the platform's values; `cas` is the version the store must still be at (absent: whatever is there). */
  | { action: "push"; cas?: number }
  /** Take the store's values; `overwrote` when the platform had unsynced changes of its own. */
  | { action: "pull"; version: number; data: Record<string, string>; overwrote: boolean; changed: boolean };

const sameData = (a: Record<string, string>, b: Record<string, string>) => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
};

export function planSync(platform: PlatformSide, store: KvSecret | undefined): SyncPlan {
  const changedHere = platform.observedGeneration !== platform.generation;
  if (!store) return { action: "push" };
  if (store.version === platform.agreedVersion) {
    return changedHere ? { action: "push", cas: store.version } : { action: "none" };
  }
  const changed = !sameData(platform.data, store.data);
  return {
    action: "pull",
    version: store.version,
    data: store.data,
    // A first agreement with a store that already holds different values also replaces the platform's.
    overwrote: changed && (changedHere || platform.agreedVersion === undefined),
    changed,
  };
}
