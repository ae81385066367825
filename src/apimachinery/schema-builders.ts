// Terse builders for the JSON schemas of resource definitions. The schema is the single source of truth for
// validation, pruning, OpenAPI and `kubectl explain`, so every field carries its description.

import type { JsonMap } from "./types.ts";

export const string = (description: string, extra: JsonMap = {}): JsonMap => ({
  type: "string",
  description,
  ...extra,
});
export const integer = (description: string, extra: JsonMap = {}): JsonMap => ({
  type: "integer",
  format: "int64",
  description,
  ...extra,
});
export const boolean = (description: string): JsonMap => ({ type: "boolean", description });
export const timestamp = (description: string): JsonMap => ({ type: "string", format: "date-time", description });

/** A list; atomic unless `listType` says otherwise (managedFields tracks set/map lists per item). */
export const array = (
  items: JsonMap,
  description: string,
  listType?: { type: "set" } | { type: "map"; keys: string[] },
): JsonMap => {
  const schema: JsonMap = { type: "array", items, description };
  if (listType) {
    schema["x-kubernetes-list-type"] = listType.type;
    if (listType.type === "map") schema["x-kubernetes-list-map-keys"] = listType.keys;
  }
  return schema;
};

export const stringList = (description: string): JsonMap => array({ type: "string" }, description);

export const object = (properties: Record<string, JsonMap>, description: string, required?: string[]): JsonMap => {
  const schema: JsonMap = { type: "object", description, properties };
  if (required?.length) schema.required = required;
  return schema;
};

export const stringMap = (description: string): JsonMap => ({
  type: "object",
  description,
  additionalProperties: { type: "string" },
});

/** An object whose fields the specification does not show: kept as sent. */
export const openObject = (description: string): JsonMap => ({
  type: "object",
  description,
  "x-kubernetes-preserve-unknown-fields": true,
});
