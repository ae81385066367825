// Every field path of a value (upstream TypedValue.ToFieldSet), before any filtering: scalars and atomic
// lists/maps are leaves; set and map lists contribute each item (as a member, plus its fields); map keys
// contribute their subtree, and are members themselves when undeclared, null or `{}`.
// Duplicated list items are owned as a whole only. Items that cannot be named (no key fields) are skipped.

import { isPlainObject } from "../types.ts";
import { type FieldPath, FieldSet } from "./field-set.ts";
import { fieldOf, type Schema, shapeOf, tryListItemElement } from "./schema-shape.ts";

/** Recursion (and each path's length) follows the value's nesting, which MAX_NESTING_DEPTH bounds. */
function walk(value: unknown, schema: Schema, path: string[], out: FieldPath[]): void {
  const shape = shapeOf(schema, value);
  if (shape.kind === "scalar") {
    out.push(path);
    return;
  }
  if (shape.kind === "list") {
    if (shape.listType === "atomic") {
      out.push(path);
      return;
    }
    if (!Array.isArray(value)) return;
    const elements = value.map((item) => tryListItemElement(shape, item));
    const seen = new Set<string>();
    const duplicates = new Set<string>();
    for (const element of elements) {
      if (element === undefined) continue;
      if (seen.has(element) && !duplicates.has(element)) {
        duplicates.add(element);
        out.push([...path, element]);
      }
      seen.add(element);
    }
    value.forEach((item, i) => {
      const element = elements[i];
      if (element === undefined || duplicates.has(element)) return;
      walk(item, shape.items, [...path, element], out);
      out.push([...path, element]);
    });
    return;
  }
  if (shape.atomic) {
    out.push(path);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const key of Object.keys(value)) {
    const child = value[key];
    const field = fieldOf(schema, key);
    const childPath = [...path, `f:${key}`];
    walk(child, field.schema, childPath, out);
    const emptyMap = isPlainObject(child) && Object.keys(child).length === 0;
    if (child === null || emptyMap || !field.declared) out.push(childPath);
  }
}

export function toFieldSet(value: unknown, schema: Schema): FieldSet {
  const paths: FieldPath[] = [];
  walk(value, schema, [], paths);
  return FieldSet.fromPaths(paths);
}
