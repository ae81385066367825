// How a JSON schema shapes field tracking, as structured-merge-diff sees the CRD structural schema:
// - objects with `properties` are structs (declared fields); `additionalProperties` and
//   x-kubernetes-preserve-unknown-fields make maps whose keys are tracked one by one;
//   `x-kubernetes-map-type: atomic` makes the whole object one leaf;
// - arrays follow x-kubernetes-list-type: atomic (the default), set (scalar items by value) or map
//   (items by x-kubernetes-list-map-keys);
// - without a schema (unknown fields), objects are granular maps and arrays are atomic ("deduced" type).
// A value whose JSON type does not fit its schema is handled as a scalar leaf.

import { isPlainObject, type JsonMap } from "../types.ts";
import { pathElement } from "./path-element.ts";

/** A sub-schema; undefined means "no schema known" (deduced from the value). */
export type Schema = JsonMap | undefined;

export type Shape =
  | { kind: "scalar" }
  | { kind: "map"; atomic: boolean }
  | { kind: "list"; listType: "atomic" | "set" | "map"; keys: readonly string[]; items: Schema };

type Kind = "map" | "list" | "scalar" | "deduced";

function asSchema(value: unknown): Schema {
  return isPlainObject(value) ? value : undefined;
}

/** The kind a schema declares, without looking at a value ("deduced": no type given). */
export function schemaKind(schema: Schema): Kind {
  if (!schema) return "deduced";
  if (schema.type === "object" || isPlainObject(schema.properties) || schema.additionalProperties !== undefined) {
    return "map";
  }
  if (schema.type === "array" || schema.items !== undefined) return "list";
  return schema.type === undefined ? "deduced" : "scalar";
}

/** The shape used to walk `value` (null and undefined take the schema's shape). */
export function shapeOf(schema: Schema, value: unknown): Shape {
  const kind = schemaKind(schema);
  const isNullish = value === null || value === undefined;
  if (kind === "deduced") {
    if (Array.isArray(value)) return { kind: "list", listType: "atomic", keys: [], items: undefined };
    return isPlainObject(value) ? { kind: "map", atomic: false } : { kind: "scalar" };
  }
  if (kind === "map") {
    if (!isNullish && !isPlainObject(value)) return { kind: "scalar" };
    return { kind: "map", atomic: schema?.["x-kubernetes-map-type"] === "atomic" };
  }
  if (kind === "list") {
    if (!isNullish && !Array.isArray(value)) return { kind: "scalar" };
    const listType = schema?.["x-kubernetes-list-type"];
    const keys = schema?.["x-kubernetes-list-map-keys"];
    const items = asSchema(schema?.items);
    if (listType === "set") return { kind: "list", listType: "set", keys: [], items };
    if (listType === "map" && Array.isArray(keys) && keys.length > 0) {
      return { kind: "list", listType: "map", keys: keys.map(String), items };
    }
    return { kind: "list", listType: "atomic", keys: [], items };
  }
  return { kind: "scalar" };
}

/** The schema of a map key, and whether it is a declared (struct) field. */
export function fieldOf(schema: Schema, key: string): { schema: Schema; declared: boolean } {
  const properties = schema?.properties;
  if (isPlainObject(properties) && Object.hasOwn(properties, key)) {
    return { schema: asSchema(properties[key]), declared: true };
  }
  return { schema: asSchema(schema?.additionalProperties), declared: false };
}

/** Why a list item cannot be named by a path element (upstream wording). */
export class ListItemError extends Error {}

/** The path element naming `item` in a set or map list; throws ListItemError if it has none. */
export function listItemElement(shape: Extract<Shape, { kind: "list" }>, item: unknown): string {
  if (shape.listType === "map") {
    if (item === null) throw new ListItemError("associative list with keys may not have a null element");
    if (!isPlainObject(item)) throw new ListItemError("associative list with keys may not have non-map elements");
    const fields: [string, unknown][] = [];
    for (const key of shape.keys) {
      if (Object.hasOwn(item, key)) fields.push([key, item[key]]);
      else {
        const fallback = fieldOf(shape.items, key).schema?.default;
        if (fallback !== undefined) fields.push([key, fallback]);
      }
    }
    if (fields.length === 0) {
      const names = shape.keys.map((key) => JSON.stringify(key)).join(" ");
      throw new ListItemError(
        `associative list with keys has an element that omits all key fields [${names}] (and doesn't have default values for any key fields)`,
      );
    }
    return pathElement.key(fields);
  }
  if (isPlainObject(item)) throw new ListItemError("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) throw new ListItemError("not supported: associative list with lists as elements");
  if (item === null) throw new ListItemError("associative list without keys has an element that's an explicit null");
  return pathElement.value(item);
}

/** The element of `item`, or undefined when it has none (such items are left untracked). */
export function tryListItemElement(shape: Extract<Shape, { kind: "list" }>, item: unknown): string | undefined {
  try {
    return listItemElement(shape, item);
  } catch (error) {
    if (error instanceof ListItemError) return undefined;
    throw error;
  }
}
