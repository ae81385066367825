// The ownership bookkeeping of structured-merge-diff's merge.Updater, on plain JSON objects:
// - every write compares the old and new object; fields another manager owns that were modified or added are
//   conflicts (taken from them when forced), and removed fields leave every manager;
// - an update gives its manager what it changed; an apply gives its manager exactly the config's fields, and
//   prunes what the manager applied before and dropped, unless someone else still owns it.

import { jsonEqual } from "../json-values.ts";
import type { JsonMap } from "../types.ts";
import { type Comparison, compareObjects } from "./compare.ts";
import { ensureNamedFieldsAreMembers } from "./ensure-named-fields.ts";
import { FieldSet } from "./field-set.ts";
import type { VersionedSet } from "./managers.ts";
import { mergeValue } from "./merge.ts";
import { removeItems } from "./remove-items.ts";
import type { Schema } from "./schema-shape.ts";
import { toFieldSet } from "./to-field-set.ts";
import { filterResetFields, type ResetFields } from "./tracked-fields.ts";

export type ManagerSets = ReadonlyMap<string, VersionedSet>;

export interface UpdaterOptions {
  schema: Schema;
  apiVersion: string;
  resetFields: ResetFields | undefined;
}

export type Outcome<T> = ({ ok: true } & T) | { ok: false; conflicts: Map<string, FieldSet> };

function filtered(comparison: Comparison, resetFields: ResetFields | undefined): Comparison {
  return {
    added: filterResetFields(comparison.added, resetFields),
    removed: filterResetFields(comparison.removed, resetFields),
    modified: filterResetFields(comparison.modified, resetFields),
  };
}

/** The part every write shares: conflicts with, and removals from, the managers other than `workflow`. */
function reconcile(
  options: UpdaterOptions,
  oldObject: JsonMap,
  newObject: JsonMap,
  managers: ManagerSets,
  workflow: string,
  force: boolean,
): Outcome<{ managers: Map<string, VersionedSet>; comparison: Comparison }> {
  const comparison = filtered(compareObjects(oldObject, newObject, options.schema), options.resetFields);
  const touched = comparison.modified.union(comparison.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [manager, versioned] of managers) {
    if (manager === workflow) continue;
    const conflict = versioned.set.intersection(touched);
    if (!conflict.isEmpty()) conflicts.set(manager, conflict);
  }
  if (!force && conflicts.size > 0) return { ok: false, conflicts };
  const out = new Map<string, VersionedSet>();
  for (const [manager, versioned] of managers) {
    let set = versioned.set;
    if (manager !== workflow)
      set = set.difference(conflicts.get(manager) ?? FieldSet.empty).difference(comparison.removed);
    if (!set.isEmpty()) out.set(manager, set === versioned.set ? versioned : { ...versioned, set });
  }
  return { ok: true, managers: out, comparison };
}

/** Ownership after a non-apply write by `manager` (upstream Updater.Update). */
export function recordUpdate(
  options: UpdaterOptions,
  oldObject: JsonMap,
  newObject: JsonMap,
  managers: ManagerSets,
  manager: string,
): Map<string, VersionedSet> {
  const result = reconcile(options, oldObject, newObject, managers, manager, true);
  if (!result.ok) throw new Error("unreachable: forced update reported conflicts");
  const { comparison } = result;
  const previous = result.managers.get(manager)?.set ?? FieldSet.empty;
  const set = filterResetFields(
    previous.difference(comparison.removed).union(comparison.modified).union(comparison.added),
    options.resetFields,
  );
  const out = result.managers;
  if (set.isEmpty()) out.delete(manager);
  else out.set(manager, { set, apiVersion: options.apiVersion, applied: false });
  return out;
}

/** Removes what `manager` applied last time and no longer applies, unless another manager owns it. */
function prune(schema: Schema, merged: JsonMap, managers: ManagerSets, lastSet: FieldSet | undefined): JsonMap {
  if (!lastSet || lastSet.isEmpty()) return merged;
  const named = (set: FieldSet) => ensureNamedFieldsAreMembers(set, schema);
  const last = named(lastSet);
  let owned = FieldSet.empty;
  for (const versioned of managers.values()) owned = owned.union(versioned.set);
  const mergedSet = named(toFieldSet(merged, schema));
  // Take away everything the manager applied before, then add back what anyone (the new config included) owns.
  const stripped = removeItems(merged, last, schema);
  const unowned = mergedSet.difference(named(toFieldSet(stripped, schema)).union(named(owned)));
  const pruned = removeItems(merged, unowned, schema);
  // Only what the manager itself applied before may go: fields nobody ever applied stay.
  const gone = mergedSet.difference(named(toFieldSet(pruned, schema))).intersection(last);
  return removeItems(merged, gone, schema);
}

/** The object after applying `config` as `manager`, and the new ownership (upstream Updater.Apply). */
export function recordApply(
  options: UpdaterOptions,
  liveObject: JsonMap,
  config: JsonMap,
  managers: ManagerSets,
  manager: string,
  force: boolean,
): Outcome<{ object: JsonMap; managers: Map<string, VersionedSet>; changed: boolean }> {
  const { schema } = options;
  const merged = mergeValue(liveObject, config, schema) as JsonMap;
  const lastSet = managers.get(manager)?.set;
  const set = filterResetFields(toFieldSet(config, schema), options.resetFields);
  const withApplier = new Map(managers);
  withApplier.set(manager, { set, apiVersion: options.apiVersion, applied: true });
  const object = prune(schema, merged, withApplier, lastSet);
  const result = reconcile(options, liveObject, object, withApplier, manager, force);
  if (!result.ok) return result;
  return { ok: true, object, managers: result.managers, changed: !jsonEqual(liveObject, object) };
}
