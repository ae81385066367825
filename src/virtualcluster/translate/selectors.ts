import type { LabelKeyTranslator } from "./label-keys.ts";
import { hostLabels, type LabelMap, virtualLabels } from "./labels.ts";

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** metav1.LabelSelector. */
export interface LabelSelector {
  matchLabels?: LabelMap;
  matchExpressions?: LabelSelectorRequirement[];
}

/** A selector is either a metav1.LabelSelector or a plain map such as a Service's spec.selector. */
export type Selector = LabelSelector | LabelMap;

const SELECTOR_FIELDS = new Set(["matchLabels", "matchExpressions"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** "selector" for a metav1.LabelSelector, "map" for a string map, undefined for anything else. */
export function selectorShape(value: unknown): "selector" | "map" | undefined {
  if (!isPlainObject(value)) return undefined;
  const entries = Object.entries(value);
  if (entries.length > 0 && entries.every(([key, v]) => SELECTOR_FIELDS.has(key) && typeof v === "object")) {
    return "selector";
  }
  return entries.every(([, v]) => typeof v === "string") ? "map" : undefined;
}

function checkedLabels(value: unknown, field: string): LabelMap | undefined {
  if (value === undefined || value === null) return undefined;
  if (selectorShape(value) !== "map") throw new TypeError(`${field} must be a map of strings`);
  return value as LabelMap;
}

function mapRequirements(
  value: unknown,
  mapKey: (key: string) => string | undefined,
): LabelSelectorRequirement[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new TypeError("matchExpressions must be a list");
  const result: LabelSelectorRequirement[] = [];
  for (const [index, item] of value.entries()) {
    if (!isPlainObject(item) || typeof item.key !== "string") {
      throw new TypeError(`matchExpressions[${index}].key must be a string`);
    }
    const key = mapKey(item.key);
    if (key !== undefined) result.push({ ...(item as unknown as LabelSelectorRequirement), key });
  }
  return result;
}

function notASelector(): TypeError {
  return new TypeError("the value is not a label selector (a map of strings or {matchLabels, matchExpressions})");
}

/**
 * Host form of a selector, translated like the labels of synced objects: reserved keys rewritten and the
 * managed-by and namespace markers added, so the selector only matches objects synced from that virtual namespace.
 */
export function hostSelector(
  value: unknown,
  keys: LabelKeyTranslator,
  markers: { virtualClusterName: string; virtualNamespace?: string },
): Selector {
  const shape = selectorShape(value);
  if (shape === "map") return hostLabels(value as LabelMap, keys, markers);
  if (shape !== "selector") throw notASelector();
  const selector = value as Record<string, unknown>;
  const result: LabelSelector = {
    matchLabels: hostLabels(checkedLabels(selector.matchLabels, "matchLabels"), keys, markers),
  };
  const expressions = mapRequirements(selector.matchExpressions, keys.host);
  if (expressions) result.matchExpressions = expressions;
  return result;
}

/** Virtual form of a host selector: markers dropped, reserved keys restored. */
export function virtualSelector(value: unknown, keys: LabelKeyTranslator): Selector {
  const shape = selectorShape(value);
  if (shape === "map") return virtualLabels(value as LabelMap, keys);
  if (shape !== "selector") throw notASelector();
  const selector = value as Record<string, unknown>;
  const result: LabelSelector = {};
  const labels = checkedLabels(selector.matchLabels, "matchLabels");
  if (labels) result.matchLabels = virtualLabels(labels, keys);
  const expressions = mapRequirements(selector.matchExpressions, keys.virtual);
  if (expressions) result.matchExpressions = expressions;
  return result;
}
