// Which fields managedFields may record. Identity and server-owned metadata are never tracked (upstream
// stripMetaManager, plus deletionTimestamp/deletionGracePeriodSeconds which only the server sets here), and the
// part of the object a request cannot change is reset: status through the main resource of a resource with a
// status subresource, everything but status and metadata through /status (upstream reset fields).

import { FieldSet } from "./field-set.ts";

export type ResetFields = "status" | "spec" | "none";

/** Identity and metadata only the server sets: never owned by a manager, always taken from the live object. */
export const SERVER_OWNED_METADATA = [
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
] as const;

const neverTracked = FieldSet.fromPaths([
  ["f:apiVersion"],
  ["f:kind"],
  ["f:metadata"],
  ...[...SERVER_OWNED_METADATA, "clusterName", "managedFields"].map((field) => ["f:metadata", `f:${field}`]),
]);

/** Removes the never-tracked metadata fields (a plain difference: only those exact paths). */
export function stripNeverTracked(set: FieldSet): FieldSet {
  return set.difference(neverTracked);
}

const keptBySpecReset = new Set(["f:metadata", "f:status", "f:apiVersion", "f:kind"]);

/** Removes, with everything below them, the top-level fields this kind of write must not own. */
export function filterResetFields(set: FieldSet, resetFields: ResetFields | undefined): FieldSet {
  if (!resetFields || resetFields === "none") return set;
  const top = [...set.memberElements(), ...set.childElements()];
  const reset = resetFields === "status" ? ["f:status"] : top.filter((element) => !keptBySpecReset.has(element));
  return set.recursiveDifference(FieldSet.fromPaths(reset.map((element) => [element])));
}

/** Whether a top-level field is reset (its value comes from the stored object) for this kind of write. */
export function isResetField(field: string, resetFields: ResetFields | undefined): boolean {
  if (resetFields === "status") return field === "status";
  if (resetFields === "spec") return !keptBySpecReset.has(`f:${field}`);
  return false;
}

/** What a manager may own out of the fields a write touched. */
export function trackedFields(set: FieldSet, resetFields: ResetFields | undefined): FieldSet {
  return filterResetFields(stripNeverTracked(set), resetFields);
}
