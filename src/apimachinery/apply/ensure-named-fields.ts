// Adds as members the declared (struct) fields that a set only reaches through their children (upstream
// EnsureNamedFieldsAreMembers). Pruning uses it so that a struct nobody owns any more is removed as a whole,
// while map keys and list items stay owned only as recorded.

import { isPlainObject } from "../types.ts";
import { FieldSet } from "./field-set.ts";
import { fieldOf, type Schema, schemaKind } from "./schema-shape.ts";

function childSchema(schema: Schema, element: string): Schema {
  const kind = schemaKind(schema);
  if (element.startsWith("f:") && kind === "map") return fieldOf(schema, element.slice(2)).schema;
  if (element.startsWith("k:") && kind === "list" && isPlainObject(schema?.items)) return schema.items;
  return undefined;
}

/** Recursion follows the set, which mirrors an object: MAX_NESTING_DEPTH bounds it (plus a few levels). */
export function ensureNamedFieldsAreMembers(set: FieldSet, schema: Schema): FieldSet {
  if (set.isEmpty()) return set;
  const isStruct = schemaKind(schema) === "map";
  const members = [...set.memberElements()];
  const children: [string, FieldSet][] = [];
  for (const element of set.childElements()) {
    if (isStruct && element.startsWith("f:") && fieldOf(schema, element.slice(2)).declared) members.push(element);
    children.push([element, ensureNamedFieldsAreMembers(set.child(element), childSchema(schema, element))]);
  }
  return FieldSet.of(members, children);
}
