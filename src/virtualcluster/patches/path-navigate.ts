import { arrayIndex, type PathSegment } from "./path-parse.ts";

export type JsonObject = { [key: string]: unknown };
export type Container = JsonObject | unknown[];

/** One place a path reached. `parent` is undefined for the whole object (empty path). */
export interface PathMatch {
  readonly parent: Container | undefined;
  readonly key: string | number;
  readonly value: unknown;
  /** False only for a final bracketed key missing from a map: it is evaluated and may add the key. */
  readonly exists: boolean;
  /** Keys from the root to this place; numbers are array indices. */
  readonly keys: (string | number)[];
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A match that remembers the match it came from and builds `keys` only when asked (most callers never ask). */
class Step implements PathMatch {
  readonly parent: Container | undefined;
  readonly key: string | number;
  readonly value: unknown;
  readonly exists: boolean;
  private readonly from: Step | undefined;
  private cachedKeys: (string | number)[] | undefined;

  constructor(
    from: Step | undefined,
    parent: Container | undefined,
    key: string | number,
    value: unknown,
    exists = true,
  ) {
    this.from = from;
    this.parent = parent;
    this.key = key;
    this.value = value;
    this.exists = exists;
  }

  get keys(): (string | number)[] {
    if (!this.cachedKeys) this.cachedKeys = this.from ? [...this.from.keys, this.key] : [];
    return this.cachedKeys;
  }
}

function step(current: Step, segment: PathSegment, last: boolean, out: Step[]): void {
  const container = current.value;
  if (segment.kind === "wildcard") {
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length; index++) {
        out.push(new Step(current, container, index, container[index]));
      }
    } else if (isJsonObject(container)) {
      for (const key of Object.keys(container)) out.push(new Step(current, container, key, container[key]));
    }
    return;
  }
  const { key } = segment;
  if (Array.isArray(container)) {
    const index = arrayIndex(key);
    if (index !== undefined && index < container.length)
      out.push(new Step(current, container, index, container[index]));
  } else if (isJsonObject(container)) {
    // Only own properties: `__proto__` or `constructor` never reach the prototype.
    if (Object.hasOwn(container, key)) out.push(new Step(current, container, key, container[key]));
    else if (last && segment.bracketed) out.push(new Step(current, container, key, undefined, false));
  }
}

/**
 * Every place the path reaches in `root`, in document order. Missing intermediate steps and type mismatches match
 * nothing; a final plain key matches only when present, a final bracketed key on a map also when missing.
 */
export function findPathMatches(root: unknown, segments: readonly PathSegment[]): PathMatch[] {
  let current: Step[] = [new Step(undefined, undefined, "", root)];
  for (let index = 0; index < segments.length; index++) {
    const next: Step[] = [];
    const last = index === segments.length - 1;
    for (const match of current) step(match, segments[index], last, next);
    current = next;
  }
  return current;
}

/** Writes a value at a match (never for the whole object; the caller replaces the root itself). */
export function setAtMatch(match: PathMatch, value: unknown): void {
  const { parent, key } = match;
  if (Array.isArray(parent)) parent[key as number] = value;
  else if (parent) Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Removes the field at a match; array elements are spliced out. */
export function removeAtMatch(match: PathMatch): void {
  const { parent, key } = match;
  if (Array.isArray(parent)) parent.splice(key as number, 1);
  else if (parent) delete parent[key as string];
}

/** Value at a relative path below `root` (first match only), or undefined. Used by reference patches. */
export function valueAtPath(root: unknown, segments: readonly PathSegment[]): PathMatch | undefined {
  return findPathMatches(root, segments).find((match) => match.exists);
}
