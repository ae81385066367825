// A path element is one step of a field path, kept in its FieldsV1 key form so that sets can use plain strings:
// `f:<name>` (a map or struct field), `k:{"name":"a"}` (a list-map item by its keys), `v:"x"` (a set item by its
// value) and `i:3` (an index, never produced here but accepted). Keys and values use Go's JSON text, so a given
// item always has the same element, and elements order as structured-merge-diff orders them.

import { jsonNestingBeyond } from "../../utils/json-nesting-beyond.ts";
import { MAX_NESTING_DEPTH } from "../../utils/max-nesting-depth.ts";
import { compareUtf8 } from "../../utils/utf8-compare.ts";
import { isPlainObject } from "../types.ts";
import { goJson } from "./go-json.ts";
import { goValueString } from "./go-string.ts";

export type ParsedElement =
  | { type: "field"; name: string }
  | { type: "key"; fields: [string, unknown][] }
  | { type: "value"; value: unknown }
  | { type: "index"; index: number };

const typeRank = { field: 0, key: 1, value: 2, index: 3 } as const;

function keyText(fields: [string, unknown][]): string {
  const sorted = [...fields].sort((a, b) => compareUtf8(a[0], b[0]));
  return `k:{${sorted.map(([name, value]) => `${goJson(name)}:${goJson(value)}`).join(",")}}`;
}

/** The JSON of a key or value element; FieldsV1 keys come from clients, and their JSON is walked recursively. */
function parseJson(text: string, body: string): unknown {
  if (jsonNestingBeyond(body, MAX_NESTING_DEPTH) !== -1) {
    throw new TypeError(
      `path element ${JSON.stringify(text.slice(0, 40))}... nests deeper than ${MAX_NESTING_DEPTH} levels`,
    );
  }
  return JSON.parse(body);
}

function parse(text: string): ParsedElement | undefined {
  if (text.length < 2 || text[1] !== ":") throw new TypeError(`invalid path element ${JSON.stringify(text)}`);
  const body = text.slice(2);
  switch (text[0]) {
    case "f":
      return { type: "field", name: body };
    case "v":
      return { type: "value", value: parseJson(text, body) };
    case "k": {
      const fields: unknown = parseJson(text, body);
      if (!isPlainObject(fields)) throw new TypeError(`invalid key path element ${JSON.stringify(text)}`);
      const entries = Object.keys(fields).map((name): [string, unknown] => [name, fields[name]]);
      return { type: "key", fields: entries.sort((a, b) => compareUtf8(a[0], b[0])) };
    }
    case "i":
      if (!/^-?\d+$/.test(body)) throw new TypeError(`invalid index path element ${JSON.stringify(text)}`);
      return { type: "index", index: Number(body) };
    default:
      // Unknown kinds are skipped, as upstream does, so a newer format does not break reading.
      return undefined;
  }
}

function serialize(element: ParsedElement): string {
  switch (element.type) {
    case "field":
      return `f:${element.name}`;
    case "key":
      return keyText(element.fields);
    case "value":
      return `v:${goJson(element.value)}`;
    case "index":
      return `i:${element.index}`;
  }
}

function valueRank(value: unknown): number {
  if (typeof value === "number") return 0;
  if (typeof value === "string") return 1;
  if (typeof value === "boolean") return 2;
  if (Array.isArray(value)) return 3;
  if (isPlainObject(value)) return 4;
  return 5;
}

/**
 * structured-merge-diff's total order of values: numbers, strings, booleans, lists, maps, null. Recursion is
 * bounded by MAX_NESTING_DEPTH: values come from bodies or from element JSON, both measured when decoded.
 */
function compareValues(a: unknown, b: unknown): number {
  const ra = valueRank(a);
  const rb = valueRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (typeof a === "number" && typeof b === "number") return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === "string" && typeof b === "string") return compareUtf8(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).sort(compareUtf8);
    const kb = Object.keys(b).sort(compareUtf8);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      const c = compareUtf8(ka[i], kb[i]) || compareValues(a[ka[i]], b[kb[i]]);
      if (c !== 0) return c;
    }
    return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
  }
  return 0;
}

function compareKeys(a: [string, unknown][], b: [string, unknown][]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareUtf8(a[i][0], b[i][0]) || compareValues(a[i][1], b[i][1]);
    if (c !== 0) return c;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function compare(a: string, b: string): number {
  if (a === b) return 0;
  if (a.startsWith("f:") && b.startsWith("f:")) return compareUtf8(a, b);
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return compareUtf8(a, b);
  if (pa.type !== pb.type) return typeRank[pa.type] < typeRank[pb.type] ? -1 : 1;
  if (pa.type === "field" && pb.type === "field") return compareUtf8(pa.name, pb.name);
  if (pa.type === "key" && pb.type === "key") return compareKeys(pa.fields, pb.fields);
  if (pa.type === "value" && pb.type === "value") return compareValues(pa.value, pb.value);
  if (pa.type === "index" && pb.type === "index") return pa.index - pb.index;
  return 0;
}

/** `.name`, `[name="a",port=80]`, `[="x"]` or `[3]`, as upstream prints path elements. */
function format(text: string): string {
  const element = parse(text);
  if (!element) return text;
  switch (element.type) {
    case "field":
      return `.${element.name}`;
    case "key":
      return `[${element.fields.map(([name, value]) => `${name}=${goValueString(value)}`).join(",")}]`;
    case "value":
      return `[=${goValueString(element.value)}]`;
    case "index":
      return `[${element.index}]`;
  }
}

export const pathElement = {
  field: (name: string): string => `f:${name}`,
  /** A list-map item by its key fields (in any order; they are sorted by name). */
  key: (fields: [string, unknown][]): string => keyText(fields),
  value: (value: unknown): string => `v:${goJson(value)}`,
  index: (index: number): string => `i:${index}`,
  /** The element's parts; undefined for an unknown kind; throws on malformed text. */
  parse,
  /** The canonical text of an element read from outside (FieldsV1 written by another server); undefined if unknown. */
  normalize: (text: string): string | undefined => {
    const parsed = parse(text);
    return parsed && serialize(parsed);
  },
  compare,
  format,
};
