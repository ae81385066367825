/**
 * `context.path` of a match: keys joined by `.`, array indices as numbers, keys containing `.`, `[` or `]` in double
 * quotes, e.g. `spec.rules."test.object.other".0`. The whole object is the empty string.
 */
export function formatContextPath(keys: readonly (string | number)[]): string {
  return keys.map((key) => (typeof key === "string" && /[.[\]]/.test(key) ? `"${key}"` : String(key))).join(".");
}
