// Server-side apply (application/apply-patch+yaml), as the Kubernetes API server does it:
// - the config is merged into the live object: leaves set, maps merged per key, atomic lists replaced, set and
//   map lists merged per item;
// - fields this manager applied before and left out of the config are removed, unless another manager owns them
//   (they are then only released); the manager's Apply entry becomes exactly the config's fields;
// - changing a field another manager owns is a 409 conflict, unless `force` (the field then changes hands);
//   applying the value it already has just shares ownership;
// - the first apply to an object without managedFields attributes its existing fields to "before-first-apply";
// - kubectl's own apply ("kubectl") takes over fields its last-applied-configuration annotation explains
//   (the documented move from client-side apply) and keeps that annotation up to date.
// The result is a fresh object: live's server-owned metadata, the merged content, the new managedFields.

import { errors } from "../errors.ts";
import { setOwn } from "../json-values.ts";
import { isPlainObject, type JsonMap, type KubeObject } from "../types.ts";
import { capUpdateManagers } from "./cap-managers.ts";
import { applyConflictError } from "./conflict-error.ts";
import type { FieldSet } from "./field-set.ts";
import {
  conflictsAllowedByLastApplied,
  hasLastApplied,
  LAST_APPLIED_ANNOTATION,
  LAST_APPLIED_MANAGER,
  lastAppliedFor,
} from "./last-applied.ts";
import { decodeManaged, encodeManaged, type Managed, managerIdentifier } from "./managers.ts";
import { emptyObjectLike, restoreServerOwned, withoutManagedFields, withoutResetFields } from "./object-parts.ts";
import { trackUpdate } from "./track-update.ts";
import { type ResetFields, stripNeverTracked } from "./tracked-fields.ts";
import { type Outcome, recordApply, type UpdaterOptions } from "./updater.ts";
import { applyConfigError } from "./validate-apply-config.ts";

type Attempt = Outcome<{ object: JsonMap; managed: Managed }>;

function without(conflicts: Map<string, FieldSet>, allowed: FieldSet): Map<string, FieldSet> {
  const remaining = new Map<string, FieldSet>();
  for (const [manager, set] of conflicts) {
    const rest = set.difference(allowed);
    if (!rest.isEmpty()) remaining.set(manager, rest);
  }
  return remaining;
}

export function serverSideApply(args: {
  schema: JsonMap;
  live: KubeObject | undefined;
  config: KubeObject;
  manager: string;
  force: boolean;
  apiVersion: string;
  time: string;
  subresource?: string;
  resetFields?: ResetFields;
}): KubeObject {
  const { schema, live, config, apiVersion, time, subresource, resetFields } = args;
  if (isPlainObject(config.metadata) && Array.isArray(config.metadata.managedFields)) {
    throw errors.badRequest("metadata.managedFields must be nil");
  }
  const invalid = applyConfigError(config, schema);
  if (invalid) throw invalid;

  const options: UpdaterOptions = { schema, apiVersion, resetFields };
  const name = args.manager || "unknown";
  const manager = managerIdentifier({ manager: name, operation: "Apply", subresource });
  const liveObject = live ? withoutManagedFields(live) : emptyObjectLike(config);
  const applied = withoutResetFields(config, resetFields);
  const stored = decodeManaged(live?.metadata?.managedFields);

  const attempt = (force: boolean): Attempt => {
    let managed = stored;
    if (managed.fields.size === 0) {
      const before = managerIdentifier({ manager: "before-first-apply", operation: "Update", apiVersion, subresource });
      managed = capUpdateManagers(trackUpdate(options, emptyObjectLike(liveObject), liveObject, managed, before, time));
    }
    const result = recordApply(options, liveObject, applied, managed.fields, manager, force);
    if (!result.ok) return result;
    const fields = result.managers;
    const own = fields.get(manager);
    if (own) {
      const set = stripNeverTracked(own.set);
      if (set.isEmpty()) fields.delete(manager);
      else fields.set(manager, { ...own, set });
    }
    const times = new Map(managed.times);
    if (fields.has(manager) && (result.changed || !times.get(manager))) times.set(manager, time);
    for (const id of [...times.keys()]) if (!fields.has(id)) times.delete(id);
    return { ok: true, object: result.object, managed: { fields, times } };
  };

  let result = attempt(args.force);
  if (!result.ok && name === LAST_APPLIED_MANAGER) {
    const allowed = conflictsAllowedByLastApplied(live, schema, apiVersion);
    if (allowed) {
      const remaining = without(result.conflicts, allowed);
      result = remaining.size === 0 ? attempt(true) : { ok: false, conflicts: remaining };
    }
  }
  if (!result.ok) throw applyConflictError(result.conflicts);

  const object = result.object as KubeObject;
  restoreServerOwned(object, live);
  if (name === LAST_APPLIED_MANAGER && hasLastApplied(object)) {
    const annotations = { ...object.metadata.annotations };
    setOwn(annotations, LAST_APPLIED_ANNOTATION, lastAppliedFor(config));
    object.metadata.annotations = annotations;
  }
  const managedFields = encodeManaged(result.managed);
  if (managedFields.length > 0) object.metadata.managedFields = managedFields;
  else delete object.metadata.managedFields;
  return object;
}
