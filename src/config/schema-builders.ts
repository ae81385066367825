// Builders particular to the platform config schema, beside the shared ones of src/apimachinery/schema-builders.ts.

import { string } from "../apimachinery/schema-builders.ts";
import type { JsonMap } from "../apimachinery/types.ts";
import { REDACTED } from "./redaction-marker.ts";

/**
 * A secret string. `format: password` marks it for redaction (src/config/secret-paths.ts walks the schema), so the
 * schema stays the one list of secret fields.
 */
export const secret = (description: string): JsonMap =>
  string(`${description} Secret: reads show "${REDACTED}"; writing "${REDACTED}" back keeps the stored value.`, {
    format: "password",
  });

/** A string with a documented default (filled into status when omitted). */
export const stringWithDefault = (description: string, value: string, extra: JsonMap = {}): JsonMap =>
  string(`${description} Default: ${JSON.stringify(value)}.`, { default: value, ...extra });

/** A non-negative integer. */
export const count = (description: string): JsonMap => ({
  type: "integer",
  format: "int64",
  minimum: 0,
  description,
});

/** Marks a field deprecated in its description, which kubectl explain shows. */
export const deprecated = (schema: JsonMap, why: string): JsonMap => ({
  ...schema,
  description: `DEPRECATED: ${why} ${String(schema.description ?? "")}`.trim(),
});
