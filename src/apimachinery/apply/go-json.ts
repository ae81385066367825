// JSON text as Go's encoding/json writes it for decoded (interface{}) values: object keys sorted, and <, >, &,
// U+2028, U+2029 escaped. FieldsV1 keys (`k:{...}`, `v:...`) and the last-applied annotation use this form, so
// the same value always gives the same text, whoever wrote it.

import { compareUtf8 } from "../../utils/utf8-compare.ts";
import { isPlainObject } from "../types.ts";

const htmlUnsafe = /[<>&\u2028\u2029]/g;

function escapeChar(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

function encodeString(text: string): string {
  return JSON.stringify(text).replace(htmlUnsafe, escapeChar);
}

/**
 * Go-compatible JSON text of a JSON value (undefined members are skipped, as JSON.stringify does). Recursion is as
 * deep as the value's nesting, which MAX_NESTING_DEPTH bounds.
 */
export function goJson(value: unknown): string {
  if (typeof value === "string") return encodeString(value);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : goJson(item))).join(",")}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort(compareUtf8);
    return `{${keys.map((key) => `${encodeString(key)}:${goJson(value[key])}`).join(",")}}`;
  }
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  return "null";
}
