// RFC 7386 JSON Merge Patch (application/merge-patch+json), and its inverse used by client-side apply style diffs.
// Both are pure: results share no objects with the inputs.

import { cloneJson, getOwn, jsonEqual, setOwn } from "./json-values.ts";
import { isPlainObject, type JsonMap } from "./types.ts";

/**
 * Applies a merge patch: object members merge recursively, `null` deletes a member, and any non-object patch
 * (array, scalar, null) replaces the target as a whole. Rejecting non-object request bodies is the caller's job.
 * Recursion follows the patch, and the result nests no deeper than the deeper input: MAX_NESTING_DEPTH holds.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return cloneJson(patch);
  const result: JsonMap = isPlainObject(target) ? cloneJson(target) : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) delete result[key];
    else setOwn(result, key, applyMergePatch(getOwn(result, key), value));
  }
  return result;
}

/**
 * The smallest merge patch turning `original` into `modified`: removed members become null, changed ones carry
 * their new value (objects recursively), unchanged ones are left out. Non-object documents give `modified` itself.
 * As with any merge patch, a null inside `modified` cannot be expressed (it would read as a deletion).
 * Recursion follows the inputs, within MAX_NESTING_DEPTH.
 */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  if (!isPlainObject(original) || !isPlainObject(modified)) return cloneJson(modified);
  const patch: JsonMap = {};
  for (const key of Object.keys(original)) {
    if (!Object.hasOwn(modified, key)) setOwn(patch, key, null);
  }
  for (const key of Object.keys(modified)) {
    const next = modified[key];
    if (!Object.hasOwn(original, key)) {
      setOwn(patch, key, cloneJson(next));
      continue;
    }
    const previous = original[key];
    if (isPlainObject(previous) && isPlainObject(next)) {
      const nested = createMergePatch(previous, next) as JsonMap;
      if (Object.keys(nested).length > 0) setOwn(patch, key, nested);
    } else if (!jsonEqual(previous, next)) {
      setOwn(patch, key, cloneJson(next));
    }
  }
  return patch;
}
