// managedFields after a non-apply write (create, update, JSON or merge patch), as the Kubernetes API server
// computes them: what the write added or changed becomes the manager's (Update operation, merged into its
// entry for the same apiVersion and subresource) and leaves the other managers; removed fields leave everyone;
// empty entries disappear. Ownership comes from `old.metadata.managedFields`: managedFields sent by the client in
// `object` are ignored (upstream lets clients replace or reset them; this server does not).

import type { JsonMap, KubeObject, ManagedFieldsEntry } from "../types.ts";
import { capUpdateManagers } from "./cap-managers.ts";
import { decodeManaged, encodeManaged, managerIdentifier } from "./managers.ts";
import { emptyObjectLike, withoutManagedFields } from "./object-parts.ts";
import { trackUpdate } from "./track-update.ts";
import type { ResetFields } from "./tracked-fields.ts";

export function updateManagedFields(args: {
  schema: JsonMap;
  old: KubeObject | undefined;
  object: KubeObject;
  manager: string;
  apiVersion: string;
  time: string;
  subresource?: string;
  resetFields?: ResetFields;
}): ManagedFieldsEntry[] {
  const { schema, old, object, apiVersion, time, subresource, resetFields } = args;
  const managed = decodeManaged(old?.metadata?.managedFields);
  // An existing object without managedFields stays untracked until its first apply (upstream skipNonApplied).
  if (old && managed.fields.size === 0) return [];
  const manager = managerIdentifier({
    manager: args.manager || "unknown",
    operation: "Update",
    apiVersion,
    subresource,
  });
  const after = withoutManagedFields(object);
  const before = old ? withoutManagedFields(old) : emptyObjectLike(after);
  const next = trackUpdate({ schema, apiVersion, resetFields }, before, after, managed, manager, time);
  return encodeManaged(capUpdateManagers(next));
}
