// Every string of an object, keys included, must be well-formed Unicode: a lone UTF-16 surrogate (`"\ud800"` in
// JSON or YAML escapes; UTF-8 bytes cannot carry one) has no UTF-8 encoding, so it could be neither stored nor
// answered faithfully, nor compared by other clients. The schema layer refuses it for every kind with a 422 naming
// the field. The walk is iterative (no recursion over user data) and stops after a few findings.

import { childPath, type FieldError, fieldError, keyPath } from "./field-errors.ts";
import { isPlainObject, type JsonMap } from "./types.ts";

/** Findings reported per object: enough to show the pattern, not one per string of a hostile body. */
const MAX_FINDINGS = 10;
/** Characters of the offending value shown in the message. */
const SHOWN_CHARACTERS = 64;
const DETAIL = "must be valid Unicode: a lone UTF-16 surrogate (\\ud800-\\udfff without its pair) cannot be encoded";

function shown(text: string): string {
  return text.length > SHOWN_CHARACTERS
    ? `${JSON.stringify(text.slice(0, SHOWN_CHARACTERS))}...`
    : JSON.stringify(text);
}

/**
 * The paths of the strings in `value` that are not well-formed, as field errors (at most MAX_FINDINGS). With the
 * object's schema, entries of maps (additionalProperties: labels, annotations, data) are named `map[key]` and fields
 * `object.field`, as Kubernetes names them.
 */
export function illFormedStrings(value: unknown, schema?: JsonMap, root = ""): FieldError[] {
  if (allWellFormed(value)) return [];
  const found: FieldError[] = [];
  const pending: [unknown, string, JsonMap | undefined][] = [[value, root, schema]];
  while (pending.length > 0 && found.length < MAX_FINDINGS) {
    const [current, path, at] = pending.pop() as [unknown, string, JsonMap | undefined];
    if (typeof current === "string") {
      if (!current.isWellFormed()) found.push(finding(path, current));
    } else if (Array.isArray(current)) {
      const items = subschema(at?.items);
      for (let i = current.length - 1; i >= 0; i--) pending.push([current[i], childPath(path, i), items]);
    } else if (current !== null && typeof current === "object") {
      const properties = subschema(at?.properties);
      const entries = subschema(at?.additionalProperties);
      const keys = Object.keys(current);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i];
        const field = subschema(properties?.[key]);
        const isEntry = !field && entries !== undefined;
        const child = isEntry ? keyPath(path, key) : childPath(path, key);
        if (!key.isWellFormed()) found.push(finding(child, key));
        pending.push([(current as Record<string, unknown>)[key], child, field ?? entries]);
      }
    }
  }
  return found.slice(0, MAX_FINDINGS);
}

/**
 * Whether every string and key in `value` is well-formed: the answer for nearly every write, found without building
 * the path of each value (which made this walk a few per cent of a create's allocation). Iterative, as above.
 */
function allWellFormed(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === "string") {
      if (!current.isWellFormed()) return false;
    } else if (Array.isArray(current)) {
      for (const item of current) pending.push(item);
    } else if (current !== null && typeof current === "object") {
      for (const key in current) {
        if (!Object.hasOwn(current, key)) continue;
        if (!key.isWellFormed()) return false;
        pending.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return true;
}

function subschema(value: unknown): JsonMap | undefined {
  return isPlainObject(value) ? value : undefined;
}

function finding(path: string, text: string): FieldError {
  return { ...fieldError.invalid(path, text, DETAIL), badValueText: shown(text) };
}
