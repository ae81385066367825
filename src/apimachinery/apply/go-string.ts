// Values printed inside field paths the way structured-merge-diff prints them (value.ToString): strings quoted as
// Go's %q does, so `.spec.items[name="a"]` and `.metadata.finalizers[="x"]` read exactly as from Kubernetes.

import { compareUtf8 } from "../../utils/utf8-compare.ts";
import { isPlainObject } from "../types.ts";

const named: Record<string, string> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  "\\": "\\\\",
  '"': '\\"',
};

/** Go's strconv.Quote for the characters that matter in practice (controls, quotes, line separators). */
export function goQuote(text: string): string {
  let out = '"';
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0;
    if (named[c] !== undefined) out += named[c];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if ((code >= 0x80 && code < 0xa0) || code === 0x2028 || code === 0x2029 || code === 0xfeff) {
      out += `\\u${code.toString(16).padStart(4, "0")}`;
    } else out += c;
  }
  return `${out}"`;
}

/** The text of a value in a path element, as upstream's value.ToString gives it (recursion: MAX_NESTING_DEPTH). */
export function goValueString(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return goQuote(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(goValueString).join(",")}]`;
  if (isPlainObject(value)) {
    return Object.keys(value)
      .sort(compareUtf8)
      .map((key) => `${key}=${goValueString(value[key])}`)
      .join("");
  }
  return "{{undefined}}";
}
