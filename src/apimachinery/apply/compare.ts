// Which fields a write added, removed or modified (upstream TypedValue.Compare). Leaves (scalars, atomic lists and
// maps, empty containers) compare by value; granular containers compare item by item, and a container that
// appears or disappears as a whole is itself added or removed. Duplicated list items compare as one leaf.

import { jsonEqual } from "../json-values.ts";
import { isPlainObject } from "../types.ts";
import { type FieldPath, FieldSet } from "./field-set.ts";
import { fieldOf, type Schema, type Shape, shapeOf, tryListItemElement } from "./schema-shape.ts";

export interface Comparison {
  added: FieldSet;
  removed: FieldSet;
  modified: FieldSet;
}

interface Collector {
  added: FieldPath[];
  removed: FieldPath[];
  modified: FieldPath[];
}

function isEmptyContainer(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isPlainObject(value) && Object.keys(value).length === 0;
}

/** Items grouped by element, in first-seen order; unnamed items make the list a leaf (undefined). */
function indexItems(shape: Extract<Shape, { kind: "list" }>, list: unknown[]): Map<string, unknown[]> | undefined {
  const index = new Map<string, unknown[]>();
  for (const item of list) {
    const element = tryListItemElement(shape, item);
    if (element === undefined) return undefined;
    const group = index.get(element);
    if (group) group.push(item);
    else index.set(element, [item]);
  }
  return index;
}

function leaf(lhs: unknown, rhs: unknown, path: FieldPath, out: Collector): void {
  if (lhs === undefined) out.added.push(path);
  else if (rhs === undefined) out.removed.push(path);
  else if (!jsonEqual(lhs, rhs)) out.modified.push(path);
}

function compareItems(
  shape: Extract<Shape, { kind: "list" }>,
  lhs: unknown[],
  rhs: unknown[],
  path: FieldPath,
  out: Collector,
): boolean {
  const left = indexItems(shape, lhs);
  const right = indexItems(shape, rhs);
  if (!left || !right) return false;
  const elements = [...new Set([...left.keys(), ...right.keys()])];
  for (const element of elements) {
    const l = left.get(element) ?? [];
    const r = right.get(element) ?? [];
    const itemPath = [...path, element];
    if (l.length <= 1 && r.length <= 1) node(l[0], r[0], shape.items, itemPath, out);
    else if (l.length >= 2 && r.length >= 2) {
      if (!jsonEqual(l, r)) out.modified.push(itemPath);
    } else if (l.length >= 2) {
      if (r.length > 0) node(undefined, r[0], shape.items, itemPath, out);
      out.removed.push(itemPath);
    } else {
      if (l.length > 0) node(l[0], undefined, shape.items, itemPath, out);
      out.added.push(itemPath);
    }
  }
  return true;
}

function compareFields(
  schema: Schema,
  lhs: Record<string, unknown>,
  rhs: Record<string, unknown>,
  path: FieldPath,
  out: Collector,
): void {
  const keys = [...new Set([...Object.keys(lhs), ...Object.keys(rhs)])];
  for (const key of keys) {
    const l = Object.hasOwn(lhs, key) ? lhs[key] : undefined;
    const r = Object.hasOwn(rhs, key) ? rhs[key] : undefined;
    node(l, r, fieldOf(schema, key).schema, [...path, `f:${key}`], out);
  }
}

/**
 * `undefined` is "absent"; null is a value. At least one side is present. Recursion follows the objects, whose
 * nesting MAX_NESTING_DEPTH bounds (checked as bodies are decoded and patches applied).
 */
function node(lhs: unknown, rhs: unknown, schema: Schema, path: FieldPath, out: Collector): void {
  const ls = lhs === undefined ? undefined : shapeOf(schema, lhs);
  const rs = rhs === undefined ? undefined : shapeOf(schema, rhs);
  const shape = rs ?? ls;
  let granular = false;
  if (shape && (!ls || !rs || ls.kind === rs.kind) && !(isEmptyContainer(lhs) && isEmptyContainer(rhs))) {
    if (shape.kind === "list" && shape.listType !== "atomic") {
      const l = Array.isArray(lhs) ? lhs : [];
      const r = Array.isArray(rhs) ? rhs : [];
      granular = compareItems(shape, l, r, path, out);
    } else if (shape.kind === "map" && !shape.atomic) {
      const l = isPlainObject(lhs) ? lhs : {};
      const r = isPlainObject(rhs) ? rhs : {};
      compareFields(schema, l, r, path, out);
      granular = true;
    }
  }
  if (!granular) leaf(lhs, rhs, path, out);
  else if (lhs === undefined) out.added.push(path);
  else if (rhs === undefined) out.removed.push(path);
}

export function compareObjects(lhs: unknown, rhs: unknown, schema: Schema): Comparison {
  const out: Collector = { added: [], removed: [], modified: [] };
  if (lhs !== undefined || rhs !== undefined) node(lhs, rhs, schema, [], out);
  return {
    added: FieldSet.fromPaths(out.added),
    removed: FieldSet.fromPaths(out.removed),
    modified: FieldSet.fromPaths(out.modified),
  };
}
