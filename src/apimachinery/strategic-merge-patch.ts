// Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch), the patch kubectl sends for built-in kinds
// (client-side apply, edit, patch): a JSON merge patch in which lists whose schema says
// `x-kubernetes-patch-strategy: merge` are merged item by item (by `x-kubernetes-patch-merge-key`, or by value for
// lists of scalars), with the directives `$patch` (replace, delete, merge), `$setElementOrder/<list>`,
// `$deleteFromPrimitiveList/<list>` and `$retainKeys`. Malformed directives are 400s worded like upstream's.

import { errors } from "./errors.ts";
import { cloneJson, jsonEqual } from "./json-values.ts";
import { isPlainObject, type JsonMap } from "./types.ts";

const PATCH = "$patch";
const RETAIN_KEYS = "$retainKeys";
const SET_ORDER = "$setElementOrder/";
const DELETE_FROM = "$deleteFromPrimitiveList/";

/** ObjectMeta is the same in every kind; its schema carries no patch annotations, so they are known here. */
const METADATA_LISTS: Record<string, { mergeKey?: string }> = {
  finalizers: {},
  ownerReferences: { mergeKey: "uid" },
};

type Schema = JsonMap | undefined;

interface ListStrategy {
  merge: boolean;
  mergeKey?: string;
}

function childSchema(schema: Schema, key: string): Schema {
  const properties = schema?.properties;
  if (isPlainObject(properties) && Object.hasOwn(properties, key) && isPlainObject(properties[key])) {
    return properties[key];
  }
  return isPlainObject(schema?.additionalProperties) ? schema.additionalProperties : undefined;
}

function listStrategy(schema: Schema, key: string, inMetadata: boolean): ListStrategy {
  if (inMetadata && Object.hasOwn(METADATA_LISTS, key)) return { merge: true, ...METADATA_LISTS[key] };
  const field = childSchema(schema, key);
  const strategy = String(field?.["x-kubernetes-patch-strategy"] ?? "");
  const mergeKey = field?.["x-kubernetes-patch-merge-key"];
  return {
    merge: strategy.split(",").includes("merge"),
    mergeKey: typeof mergeKey === "string" ? mergeKey : undefined,
  };
}

function itemSchema(schema: Schema, key: string): Schema {
  const items = childSchema(schema, key)?.items;
  return isPlainObject(items) ? items : undefined;
}

function invalid(message: string): never {
  throw errors.badRequest(`the strategic merge patch is invalid: ${message}`);
}

/** Applies `patch` to `original` (neither is changed) using the whole-object schema of the kind. */
export function applyStrategicMergePatch(original: unknown, patch: unknown, schema: JsonMap): JsonMap {
  if (!isPlainObject(patch)) invalid("the patch must be a JSON object");
  const base = isPlainObject(original) ? original : {};
  return mergeMap(base, patch, schema, false);
}

/**
 * Recursion (here and through mergeList) follows the patch, and the result nests no deeper than the deeper input,
 * so MAX_NESTING_DEPTH, which the decoded patch and the stored object were held to, bounds it.
 */
function mergeMap(original: JsonMap, patch: JsonMap, schema: Schema, inMetadata: boolean): JsonMap {
  const directive = patch[PATCH];
  if (directive !== undefined) {
    if (directive === "replace") return mergeMap({}, withoutKey(patch, PATCH), schema, inMetadata);
    if (directive === "delete") return {};
    if (directive !== "merge") invalid(`unknown patch type: ${JSON.stringify(directive)} in map`);
  }
  let result: JsonMap = cloneJson(original);
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) invalid(`${RETAIN_KEYS} must be a list`);
    const keep = new Set(retain.map(String));
    result = Object.fromEntries(Object.entries(result).filter(([key]) => keep.has(key)));
  }
  const orders: [string, unknown[]][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === PATCH || key === RETAIN_KEYS) continue;
    if (key.startsWith(SET_ORDER)) {
      if (!Array.isArray(value)) invalid(`${key} must be a list`);
      orders.push([key.slice(SET_ORDER.length), value]);
      continue;
    }
    if (key.startsWith(DELETE_FROM)) {
      if (!Array.isArray(value)) invalid(`${key} must be a list`);
      const field = key.slice(DELETE_FROM.length);
      const current = result[field];
      if (Array.isArray(current)) result[field] = current.filter((item) => !value.some((v) => jsonEqual(v, item)));
      continue;
    }
    const childInMetadata = !inMetadata && schema !== undefined && key === "metadata" && isTopLevel(schema);
    if (value === null) {
      delete result[key];
    } else if (isPlainObject(value)) {
      const current = result[key];
      const merged = mergeMap(isPlainObject(current) ? current : {}, value, childSchema(schema, key), childInMetadata);
      if (value[PATCH] === "delete") delete result[key];
      else result[key] = merged;
    } else if (Array.isArray(value)) {
      const strategy = listStrategy(schema, key, inMetadata);
      const current = result[key];
      result[key] = strategy.merge
        ? mergeList(Array.isArray(current) ? current : [], value, strategy, itemSchema(schema, key))
        : stripDirectives(value, itemSchema(schema, key));
    } else {
      result[key] = value;
    }
  }
  for (const [key, order] of orders) {
    const list = result[key];
    if (Array.isArray(list)) result[key] = applyOrder(list, order, listStrategy(schema, key, inMetadata).mergeKey);
  }
  return result;
}

/** The whole-object schema: the only one whose `metadata` property is ObjectMeta. */
function isTopLevel(schema: JsonMap): boolean {
  const properties = schema.properties;
  return isPlainObject(properties) && isPlainObject(properties.apiVersion) && isPlainObject(properties.kind);
}

function mergeList(original: unknown[], patch: unknown[], strategy: ListStrategy, schema: Schema): unknown[] {
  if (patch.some((item) => isPlainObject(item) && item[PATCH] === "replace")) {
    return stripDirectives(
      patch.filter((item) => !(isPlainObject(item) && item[PATCH] === "replace")),
      schema,
    );
  }
  const key = strategy.mergeKey;
  if (!key) {
    // A set of scalars: the union, in order of first appearance.
    const result = cloneJson(original);
    for (const item of patch) if (!result.some((r) => jsonEqual(r, item))) result.push(cloneJson(item));
    return result;
  }
  const result = cloneJson(original);
  for (const item of patch) {
    if (!isPlainObject(item)) invalid(`a list merged by ${JSON.stringify(key)} may only hold objects`);
    if (!Object.hasOwn(item, key)) invalid(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const index = result.findIndex((r) => isPlainObject(r) && jsonEqual(r[key], item[key]));
    if (item[PATCH] === "delete") {
      if (index !== -1) result.splice(index, 1);
      continue;
    }
    const current = index === -1 ? {} : (result[index] as JsonMap);
    const merged = mergeMap(current, item, schema, false);
    if (index === -1) result.push(merged);
    else result[index] = merged;
  }
  return result;
}

/** `$setElementOrder`: the listed items first, in that order; items the patch did not list keep their order after. */
function applyOrder(list: unknown[], order: unknown[], mergeKey: string | undefined): unknown[] {
  const identity = (item: unknown) => (mergeKey && isPlainObject(item) ? item[mergeKey] : item);
  const wanted = order.map(identity);
  const position = (item: unknown) => wanted.findIndex((w) => jsonEqual(w, identity(item)));
  const listed = list.filter((item) => position(item) !== -1).sort((a, b) => position(a) - position(b));
  const rest = list.filter((item) => position(item) === -1);
  return [...listed, ...rest];
}

/** A list taken whole from the patch: directives inside its items are applied against nothing. */
function stripDirectives(list: unknown[], schema: Schema): unknown[] {
  return list.map((item) => (isPlainObject(item) ? mergeMap({}, item, schema, false) : item));
}

function withoutKey(map: JsonMap, key: string): JsonMap {
  const { [key]: _, ...rest } = map;
  return rest;
}
