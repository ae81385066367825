// Removes the fields of a set from a value (upstream TypedValue.RemoveItems): a member path drops that field or
// list item with everything below it; a parent path recurses. A map or list emptied by the removal disappears
// (upstream leaves a null, which the custom resource decoder then drops). The result shares nothing with `value`.

import { cloneJson, setOwn } from "../json-values.ts";
import { isPlainObject, type JsonMap } from "../types.ts";
import type { FieldSet } from "./field-set.ts";
import { fieldOf, type Schema, shapeOf, tryListItemElement } from "./schema-shape.ts";

/** undefined when nothing is left of `value`. Recursion follows the value: MAX_NESTING_DEPTH bounds it. */
function remove(value: unknown, toRemove: FieldSet, schema: Schema): unknown {
  const shape = shapeOf(schema, value);
  if (shape.kind === "list" && shape.listType !== "atomic" && Array.isArray(value)) {
    const kept: unknown[] = [];
    for (const item of value) {
      const element = tryListItemElement(shape, item);
      if (element === undefined) {
        kept.push(cloneJson(item));
        continue;
      }
      if (toRemove.has([element])) continue;
      const below = toRemove.child(element);
      const next = below.isEmpty() ? cloneJson(item) : remove(item, below, shape.items);
      if (next !== undefined) kept.push(next);
    }
    return kept.length > 0 ? kept : undefined;
  }
  if (shape.kind === "map" && !shape.atomic && isPlainObject(value)) {
    const kept: JsonMap = {};
    for (const key of Object.keys(value)) {
      const element = `f:${key}`;
      if (toRemove.has([element])) continue;
      const below = toRemove.child(element);
      const next = below.isEmpty() ? cloneJson(value[key]) : remove(value[key], below, fieldOf(schema, key).schema);
      if (next !== undefined) setOwn(kept, key, next);
    }
    return Object.keys(kept).length > 0 ? kept : undefined;
  }
  return cloneJson(value);
}

export function removeItems(object: JsonMap, toRemove: FieldSet, schema: Schema): JsonMap {
  if (toRemove.isEmpty()) return cloneJson(object);
  const result = remove(object, toRemove, schema);
  return isPlainObject(result) ? result : {};
}
