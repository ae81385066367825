import { isDeepStrictEqual } from "node:util";
import type { OwnerReference } from "../../apimachinery/types.ts";
import type { SyncedKind } from "./synced-kind.ts";
import type { WireObject } from "./types.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Drops null, empty lists and empty maps, recursively: the API treats them as absent. The objects come from API
 * servers: ours hold bodies to MAX_NESTING_DEPTH, and the synced kinds' schemas are shallow.
 */
function pruned(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(pruned);
    return items.length === 0 ? undefined : items;
  }
  if (!isObject(value)) return value === null ? undefined : value;
  const result: Json = {};
  for (const [key, item] of Object.entries(value)) {
    const kept = pruned(item);
    if (kept !== undefined) result[key] = kept;
  }
  return Object.keys(result).length === 0 ? undefined : result;
}

const looselyEqual = (a: unknown, b: unknown): boolean => isDeepStrictEqual(pruned(a), pruned(b));

const ownerKey = (reference: OwnerReference) => ({
  apiVersion: reference.apiVersion,
  kind: reference.kind,
  name: reference.name,
  uid: reference.uid,
  controller: reference.controller === true,
  blockOwnerDeletion: reference.blockOwnerDeletion === true,
});

/**
 * True when the host object `actual` already is in the state `desired` describes: same labels, annotations and
 * owner references, and the same content as the kind declares it (server-set and defaulted fields such as cluster
 * IPs and default protocols ignored or filled in). The syncer writes only when this is false.
 */
export function semanticallyEqual(kind: SyncedKind, desired: WireObject, actual: WireObject): boolean {
  const d = desired.metadata ?? {};
  const a = actual.metadata ?? {};
  if (!looselyEqual(d.labels, a.labels) || !looselyEqual(d.annotations, a.annotations)) return false;
  if (!looselyEqual((d.ownerReferences ?? []).map(ownerKey), (a.ownerReferences ?? []).map(ownerKey))) return false;
  return looselyEqual(kind.content(desired), kind.content(actual));
}
