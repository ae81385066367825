// Merges an applied configuration into the live object (upstream TypedValue.Merge with "keep the right-hand
// side"): leaves take the config's value, granular maps merge per key, set and map lists merge per item.
// Merged list order: the config's items in the config's order, with live-only items kept where they were.
// A null in the config sets a leaf to null but has no opinion on a granular map or list's contents.
// The result shares nothing with its inputs.

import { cloneJson, setOwn } from "../json-values.ts";
import { isPlainObject, type JsonMap } from "../types.ts";
import { fieldOf, type Schema, type Shape, shapeOf, tryListItemElement } from "./schema-shape.ts";

type ListShape = Extract<Shape, { kind: "list" }>;

function isEmptyContainer(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isPlainObject(value) && Object.keys(value).length === 0;
}

function elementsOf(shape: ListShape, list: unknown[]): string[] | undefined {
  const elements: string[] = [];
  for (const item of list) {
    const element = tryListItemElement(shape, item);
    if (element === undefined) return undefined;
    elements.push(element);
  }
  return elements;
}

function mergeList(shape: ListShape, live: unknown[], config: unknown[]): unknown[] | undefined {
  const left = elementsOf(shape, live);
  const right = elementsOf(shape, config);
  // Items that cannot be named: the list cannot be merged by item, the config replaces it.
  if (!left || !right) return undefined;
  const liveItem = new Map<string, unknown>();
  const duplicated = new Set<string>();
  left.forEach((element, i) => {
    if (liveItem.has(element)) duplicated.add(element);
    else liveItem.set(element, live[i]);
  });
  const configItem = new Map<string, unknown>(right.map((element, i) => [element, config[i]]));
  // A duplicated live item has no single value to merge with: the config's item wins.
  const liveValue = (element: string) => (duplicated.has(element) ? undefined : liveItem.get(element));

  const shared = right.filter((element) => liveItem.has(element));
  let nextShared = shared.shift();
  const merged = new Set<string>();
  const out: unknown[] = [];
  let l = 0;
  let r = 0;
  while (l < left.length || r < right.length) {
    if (l < left.length && r < right.length) {
      const element = left[l];
      if (element === right[r]) {
        merged.add(element);
        out.push(mergeValue(liveValue(element), configItem.get(element), shape.items));
        l++;
        r++;
        nextShared = shared.shift();
        continue;
      }
      // A shared item met too early on the live side waits for its turn in the config's order.
      if (configItem.has(element) && nextShared !== undefined && nextShared !== element) {
        l++;
        continue;
      }
    }
    if (l < left.length) {
      const element = left[l];
      if (!configItem.has(element)) {
        out.push(cloneJson(live[l]));
        l++;
        continue;
      }
      if (merged.has(element)) l++;
    }
    if (r < right.length) {
      const element = right[r];
      merged.add(element);
      out.push(mergeValue(liveValue(element), configItem.get(element), shape.items));
      r++;
      if (nextShared === element) nextShared = shared.shift();
    }
  }
  return out;
}

function mergeMap(schema: Schema, live: JsonMap, config: JsonMap): JsonMap {
  const out: JsonMap = {};
  for (const key of new Set([...Object.keys(live), ...Object.keys(config)])) {
    const l = Object.hasOwn(live, key) ? live[key] : undefined;
    const r = Object.hasOwn(config, key) ? config[key] : undefined;
    setOwn(out, key, mergeValue(l, r, fieldOf(schema, key).schema));
  }
  return out;
}

/**
 * `undefined` is "absent" on either side; at least one side is present. Recursion follows the deeper of the two,
 * and both are within MAX_NESTING_DEPTH (bodies are measured as they are decoded).
 */
export function mergeValue(live: unknown, config: unknown, schema: Schema): unknown {
  if (config === undefined) return cloneJson(live);
  if (live === undefined) return cloneJson(config);
  const ls = shapeOf(schema, live);
  const rs = shapeOf(schema, config);
  if (ls.kind !== rs.kind || (isEmptyContainer(live) && isEmptyContainer(config))) return cloneJson(config);
  if (rs.kind === "list" && rs.listType !== "atomic") {
    const merged = mergeList(rs, Array.isArray(live) ? live : [], Array.isArray(config) ? config : []);
    return merged ?? cloneJson(config);
  }
  if (rs.kind === "map" && !rs.atomic) {
    return mergeMap(schema, isPlainObject(live) ? live : {}, isPlainObject(config) ? config : {});
  }
  return cloneJson(config);
}
