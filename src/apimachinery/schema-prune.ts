// Structural pruning, as the API server does for custom resources: fields a schema does not declare are dropped
// and reported (`spec.foo`, `spec.list[0].bar`, map entries as `.key` like upstream's pruning paths), so the
// registry can answer fieldValidation Strict, Warn or Ignore. Mutates the object in place, by design.

import { childPath } from "./field-errors.ts";
import { isPlainObject, type JsonMap } from "./types.ts";

function preservesUnknown(schema: JsonMap): boolean {
  return schema["x-kubernetes-preserve-unknown-fields"] === true;
}

/**
 * Null in a field that is not nullable and has no default is dropped without a report, as the custom resource
 * decoder does (PruneNonNullableNullsWithoutDefaults): clients send `field: null` meaning "not set".
 */
function droppableNull(value: unknown, schema: unknown): boolean {
  return value === null && isPlainObject(schema) && schema.nullable !== true && schema.default === undefined;
}

/** Recursion follows the schema (where the schema stops, so does the walk), and the value: MAX_NESTING_DEPTH. */
function pruneValue(value: unknown, schema: unknown, path: string, removed: string[]): void {
  if (!isPlainObject(schema)) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (isPlainObject(items)) {
      for (let i = 0; i < value.length; i++) pruneValue(value[i], items, childPath(path, i), removed);
    }
    return;
  }
  if (!isPlainObject(value)) return;
  const properties = isPlainObject(schema.properties) ? schema.properties : undefined;
  const additional = schema.additionalProperties;
  // Without declared properties (and without a value schema for map entries) everything below is kept.
  if (!properties && !isPlainObject(additional)) return;
  for (const key of Object.keys(value)) {
    const child = value[key];
    const childSchema = properties && Object.hasOwn(properties, key) ? properties[key] : additional;
    if (isPlainObject(childSchema)) {
      if (droppableNull(child, childSchema)) delete value[key];
      else pruneValue(child, childSchema, childPath(path, key), removed);
    } else if (additional !== true && !preservesUnknown(schema)) {
      removed.push(childPath(path, key));
      delete value[key];
    }
  }
}

/** Removes undeclared fields from `object` (in place) and returns their paths. */
export function pruneUnknownFields(object: unknown, schema: JsonMap): string[] {
  const removed: string[] = [];
  pruneValue(object, schema, "", removed);
  return removed;
}
