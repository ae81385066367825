// The 409 of a refused apply, worded as the Kubernetes API server words it (managedfields internal/conflict.go):
//   Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using management.platform.sh/v1: .spec.email
//   Apply failed with 2 conflicts: conflicts with "a" using v1:\n- .spec.x\nconflicts with "b":\n- .spec.y
// with one FieldManagerConflict cause per field.

import { compareUtf8 } from "../../utils/utf8-compare.ts";
import { errors, type StatusError } from "../errors.ts";
import type { StatusCause } from "../types.ts";
import { formatFieldPath } from "./field-path.ts";
import type { FieldSet } from "./field-set.ts";
import { describeManager } from "./managers.ts";

/** `conflicts` maps manager identifiers to the fields they own that the apply would change. */
export function applyConflictError(conflicts: ReadonlyMap<string, FieldSet>): StatusError {
  const managers = [...conflicts.keys()].sort(compareUtf8);
  const causes: StatusCause[] = [];
  const lines: string[] = [];
  for (const manager of managers) {
    const who = describeManager(manager);
    lines.push(`conflicts with ${who}:`);
    for (const path of conflicts.get(manager)?.paths() ?? []) {
      const field = formatFieldPath(path);
      causes.push({ reason: "FieldManagerConflict", message: `conflict with ${who}`, field });
      lines.push(`- ${field}`);
    }
  }
  const message =
    causes.length === 1
      ? `Apply failed with 1 conflict: ${causes[0].message}: ${causes[0].field}`
      : `Apply failed with ${causes.length} conflicts: ${lines.join("\n")}`;
  return errors.conflictMessage(message, { causes });
}
