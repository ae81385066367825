// Builders particular to the platform config schema, beside the shared ones of src/apimachinery/schema-builders.ts.

import { declared, type Schema, string } from "../apimachinery/schema-builders.ts";
import type { JsonMap } from "../apimachinery/types.ts";
import { REDACTED } from "./redaction-marker.ts";

/**
 * A secret string. `format: password` marks it for redaction (src/config/secret-paths.ts walks the schema), so the
 * schema stays the one list of secret fields.
 */
export const secret = (description: string): Schema<string> =>
  string(`${description} Secret: reads show "${REDACTED}"; writing "${REDACTED}" back keeps the stored value.`, {
    format: "password",
  });

/** A string with a documented default (filled into status when omitted). */
export const stringWithDefault = <const V extends string = string>(
  description: string,
  value: NoInfer<V>,
  extra: JsonMap & { enum?: readonly V[] } = {},
): Schema<V> => string(`${description} Default: ${JSON.stringify(value)}.`, { default: value, ...extra });

/** A non-negative integer. */
export const count = (description: string): Schema<number> =>
  declared({ type: "integer", format: "int64", minimum: 0, description });

/** Marks a field deprecated in its description, which kubectl explain shows. */
export const deprecated = <T>(schema: Schema<T>, why: string): Schema<T> => ({
  ...schema,
  description: `DEPRECATED: ${why} ${String(schema.description ?? "")}`.trim(),
});
