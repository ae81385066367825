// Small helpers for JSON values decoded from untrusted input. Keys such as "__proto__" or "constructor" are
// ordinary data here: they are read only as own properties and written with defineProperty, so a document can never
// reach or replace a prototype.

import { isPlainObject, type JsonMap } from "./types.ts";

/** The value of an own property, or undefined (never an inherited one such as `constructor`). */
export function getOwn(object: JsonMap, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Sets an own data property; `__proto__` becomes a plain key instead of invoking the prototype setter. */
export function setOwn(object: JsonMap, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

/**
 * A deep copy of a JSON value sharing nothing with the original. Recursion is as deep as the value's nesting, which
 * MAX_NESTING_DEPTH bounds for request bodies and what patches make of objects.
 */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  if (isPlainObject(value)) {
    const copy: JsonMap = {};
    for (const key of Object.keys(value)) setOwn(copy, key, cloneJson(value[key]));
    return copy as T;
  }
  return value;
}

/**
 * Structural JSON equality: objects compare by key set regardless of order, arrays element-wise. Recursion stops at
 * the shallower value's nesting (MAX_NESTING_DEPTH bounds request data).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b) || Array.isArray(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}

/** The JSON type name of a value as Kubernetes prints it in type errors: integer, number, string, ... */
export function jsonTypeName(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}
