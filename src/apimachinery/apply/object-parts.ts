// Copies of objects as the field manager needs them: without managedFields, without the fields a write may not
// change, and with the server-owned metadata of the stored object.

import { cloneJson, getOwn } from "../json-values.ts";
import { isPlainObject, type JsonMap, type KubeObject } from "../types.ts";
import { isResetField, type ResetFields, SERVER_OWNED_METADATA } from "./tracked-fields.ts";

/** A deep copy without metadata.managedFields (ownership is never part of the compared content). */
export function withoutManagedFields(object: KubeObject): JsonMap {
  const copy = cloneJson(object) as JsonMap;
  if (isPlainObject(copy.metadata)) delete copy.metadata.managedFields;
  return copy;
}

/** The object a create starts from: only its type, as upstream's new empty object. */
export function emptyObjectLike(object: JsonMap): JsonMap {
  const empty: JsonMap = {};
  if (object.apiVersion !== undefined) empty.apiVersion = object.apiVersion;
  if (object.kind !== undefined) empty.kind = object.kind;
  return empty;
}

/** A config without the top-level fields this kind of write resets: their values stay as stored. */
export function withoutResetFields(config: JsonMap, resetFields: ResetFields | undefined): JsonMap {
  const copy = cloneJson(config);
  for (const key of Object.keys(copy)) if (isResetField(key, resetFields)) delete copy[key];
  return copy;
}

/** Puts the stored object's identity and server-owned metadata back (whatever the config said). */
export function restoreServerOwned(object: JsonMap, live: KubeObject | undefined): void {
  if (!isPlainObject(object.metadata)) object.metadata = {};
  const metadata = object.metadata as JsonMap;
  if (!live) return;
  const stored = isPlainObject(live.metadata) ? (live.metadata as JsonMap) : {};
  for (const key of SERVER_OWNED_METADATA) {
    const value = getOwn(stored, key);
    if (value === undefined) delete metadata[key];
    else metadata[key] = cloneJson(value);
  }
}
