import { arrayIndex, type PathSegment } from "./path-parse.ts";

function segmentsMayMeet(a: PathSegment, b: PathSegment): boolean {
  if (a.kind === "wildcard" || b.kind === "wildcard") return true;
  if (a.key === b.key) return true;
  // Two indices of one array are not independent: removing one element moves the other.
  return arrayIndex(a.key) !== undefined && arrayIndex(b.key) !== undefined;
}

/**
 * True when writing at one path could change what the other path matches or where its writes land: one may be a
 * prefix of the other (wildcards match anything), or both end in indices of the same array. Patches whose paths do
 * not overlap can be evaluated together against the object as it was before either of them.
 */
export function pathsMayOverlap(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  const shared = Math.min(a.length, b.length);
  for (let i = 0; i < shared; i++) if (!segmentsMayMeet(a[i], b[i])) return false;
  return true;
}
