/**
 * Deep copy of JSON data with JSON.stringify's rules (undefined, functions and symbols dropped from objects and
 * turned into null in arrays, non-finite numbers to null, toJSON honoured), about twice as fast as a JSON round
 * trip for Kubernetes-sized objects. Keys such as `__proto__` stay plain data. Cycles (and nesting deeper than
 * MAX_DEPTH) throw a TypeError.
 */
export function cloneJson(value: unknown): unknown {
  return copy(value, 0);
}

/** Far deeper than any Kubernetes object; a cycle is found by running into it (cheaper than tracking a path). */
const MAX_DEPTH = 1000;

function copy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null; // -0 is 0 in JSON
    case "object":
      break;
    case "bigint":
      throw new TypeError("a BigInt cannot be copied as JSON");
    default:
      return undefined;
  }
  if (value === null) return null;
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === "function") return copy(withJson.toJSON(), depth + 1);
  if (depth > MAX_DEPTH) throw new TypeError(`cannot copy as JSON: cyclic or nested more than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    const array: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) array[i] = copy(value[i], depth + 1) ?? null; // holes too, like JSON
    return array;
  }
  const object: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copy((value as Record<string, unknown>)[key], depth + 1);
    if (item === undefined) continue;
    if (key === "__proto__") {
      Object.defineProperty(object, key, { value: item, writable: true, enumerable: true, configurable: true });
    } else {
      object[key] = item;
    }
  }
  return object;
}
