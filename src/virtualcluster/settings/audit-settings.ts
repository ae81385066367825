// The `audit` section of virtualcluster.yaml: the same shape as the platform's status.audit (enabled, level or
// policy, path, maxAge, maxBackups, maxSize, compress), checked by the platform's own schema and rules, so a policy
// means the same on both. Differences: `path` is optional (default audit/audit.log) and relative to the data
// directory; the datastore fields belong to the platform and are refused here.

import { type FieldError, fieldError } from "../../apimachinery/field-errors.ts";
import { compileObjectSchema } from "../../apimachinery/schema.ts";
import { Problems } from "../../config/problems.ts";
import { auditSchema } from "../../config/schema-audit.ts";
import type { AuditConfig } from "../../config/types.ts";
import { validateAudit } from "../../config/validate-audit.ts";

/** Where the audit log goes when `path` is unset, relative to the data directory. */
export const DEFAULT_AUDIT_PATH = "audit/audit.log";
const PLATFORM_ONLY = ["dataStoreEndpoint", "dataStoreTTL", "disableAgentSyncBack"] as const;

const schema = compileObjectSchema({ audit: auditSchema });

/** Every problem of an audit section, with `audit.`-prefixed field paths. */
export function checkAuditSettings(audit: AuditConfig): FieldError[] {
  const errors = schema.validate({ audit });
  for (const field of PLATFORM_ONLY) {
    if (audit[field] !== undefined) {
      errors.push(
        fieldError.forbidden(`audit.${field}`, "set on the platform's audit config, not a virtual cluster's"),
      );
    }
  }
  if (errors.length > 0) return errors;
  const problems = new Problems("");
  validateAudit({ ...audit, path: audit.path || DEFAULT_AUDIT_PATH }, problems);
  return problems.errors;
}
