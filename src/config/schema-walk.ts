// Walking the config schema along a config path: the schema of a value, and the path written in the field error
// convention (declared fields as `.name`, map entries as `[key]`, list items as `[0]`).

import { isPlainObject, type JsonMap } from "../apimachinery/types.ts";
import { configSchema } from "./schema.ts";
import type { PathSegment } from "./yaml-source.ts";

function child(schema: JsonMap | undefined, segment: PathSegment): { schema?: JsonMap; mapEntry: boolean } {
  if (!schema) return { mapEntry: false };
  if (typeof segment === "number") {
    return { schema: isPlainObject(schema.items) ? schema.items : undefined, mapEntry: false };
  }
  const properties = isPlainObject(schema.properties) ? schema.properties : undefined;
  if (properties && Object.hasOwn(properties, segment) && isPlainObject(properties[segment])) {
    return { schema: properties[segment] as JsonMap, mapEntry: false };
  }
  if (isPlainObject(schema.additionalProperties)) return { schema: schema.additionalProperties, mapEntry: true };
  return { mapEntry: false };
}

/** The schema of the value at `path`, or undefined when the schema does not declare it. */
export function schemaAt(path: readonly PathSegment[]): JsonMap | undefined {
  let schema: JsonMap | undefined = configSchema;
  for (const segment of path) {
    schema = child(schema, segment).schema;
    if (!schema) return undefined;
  }
  return schema;
}

/** `fieldPath("spec.raw", ["auth", "customHttpHeaders", "X-A"])` = `spec.raw.auth.customHttpHeaders[X-A]`. */
export function fieldPath(prefix: string, path: readonly PathSegment[]): string {
  let out = prefix;
  let schema: JsonMap | undefined = configSchema;
  for (const segment of path) {
    const next = child(schema, segment);
    if (typeof segment === "number" || next.mapEntry) out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
    schema = next.schema;
  }
  return out;
}
