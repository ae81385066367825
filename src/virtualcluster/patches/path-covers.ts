import type { PathSegment } from "./path-parse.ts";

/**
 * True when a patch path reaches the place `keys` names, or a place that contains it: every segment matches the key
 * at its position (a wildcard any key or index, a key segment the same key or array index), and the path is no
 * longer than `keys`. `metadata.annotations[*]` and `metadata.annotations` both cover `metadata.annotations.note`.
 */
export function pathCovers(segments: readonly PathSegment[], keys: readonly (string | number)[]): boolean {
  if (segments.length > keys.length) return false;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (segment.kind === "key" && segment.key !== String(keys[i])) return false;
  }
  return true;
}
