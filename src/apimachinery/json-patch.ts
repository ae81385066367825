// RFC 6902 JSON Patch (application/json-patch+json) as the API server applies it: a malformed patch document is
// 400 BadRequest, more than 10,000 operations 413, and an operation that cannot be applied 422 naming the
// operation's index and path (copies adding more than 3 MiB in all among them); one that would nest the object past
// MAX_NESTING_DEPTH is 400. The document is copied first, so the caller's object is never touched.

import { MAX_NESTING_DEPTH } from "../utils/max-nesting-depth.ts";
import { valueNestingBeyond } from "../utils/value-nesting-beyond.ts";
import { errors } from "./errors.ts";
import { cloneJson, getOwn, jsonEqual, setOwn } from "./json-values.ts";
import { isPlainObject, type JsonMap } from "./types.ts";

const MAX_OPERATIONS = 10000;
/**
 * What the copies of one patch may add to the object, in bytes of JSON (Kubernetes' AccumulatedCopySizeLimit, at
 * the body size limit): each copy of a branch into itself doubles it, so a few dozen would exhaust the memory.
 */
const MAX_COPIED_BYTES = 3 * 1024 * 1024;
const OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;
type OpName = (typeof OPS)[number];

interface Operation {
  /** Position in the patch, for messages. */
  index: number;
  op: OpName;
  path: string;
  tokens: string[];
  from?: string;
  fromTokens?: string[];
  value?: unknown;
}

/** Decodes a JSON pointer (RFC 6901) into reference tokens; undefined if malformed. */
function parsePointer(pointer: string): string[] | undefined {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return undefined;
  const tokens = pointer.slice(1).split("/");
  for (const token of tokens) if (/~(?![01])/.test(token)) return undefined;
  return tokens.map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function decodeOperation(raw: unknown, index: number): Operation {
  const bad = (why: string) => errors.badRequest(`invalid JSON patch operation ${index}: ${why}`);
  if (!isPlainObject(raw)) throw bad("an operation must be a JSON object");
  const op = getOwn(raw, "op");
  if (op === undefined) throw bad(`missing "op" field`);
  if (typeof op !== "string" || !(OPS as readonly string[]).includes(op)) {
    throw bad(`unknown op ${JSON.stringify(op)}, expected one of ${OPS.join(", ")}`);
  }
  const path = getOwn(raw, "path");
  if (typeof path !== "string") throw bad(path === undefined ? `missing "path" field` : `"path" must be a string`);
  const tokens = parsePointer(path);
  if (!tokens) throw bad(`"path" is not a valid JSON pointer: ${JSON.stringify(path)}`);
  const operation: Operation = { index, op: op as OpName, path, tokens };
  if (op === "move" || op === "copy") {
    const from = getOwn(raw, "from");
    if (typeof from !== "string") throw bad(from === undefined ? `missing "from" field` : `"from" must be a string`);
    const fromTokens = parsePointer(from);
    if (!fromTokens) throw bad(`"from" is not a valid JSON pointer: ${JSON.stringify(from)}`);
    operation.from = from;
    operation.fromTokens = fromTokens;
  }
  if (op === "add" || op === "replace" || op === "test") {
    if (!Object.hasOwn(raw, "value")) throw bad(`missing "value" field`);
    operation.value = raw.value;
  }
  return operation;
}

/** Thrown while applying; turned into a 422 carrying the operation's index and op. */
class NotApplicable extends Error {}

type Container = JsonMap | unknown[];

/** Resolves the container holding the last token of `tokens`; throws when a parent is missing or a scalar. */
function parentOf(document: unknown, tokens: string[], pointer: string, what = "path"): Container {
  let node = document;
  for (const token of tokens.slice(0, -1)) {
    node = Array.isArray(node)
      ? node[arrayIndex(node, token, pointer, false)]
      : isPlainObject(node)
        ? getOwn(node, token)
        : undefined;
    if (node === undefined) break;
  }
  if (!Array.isArray(node) && !isPlainObject(node)) {
    throw new NotApplicable(`doc is missing ${what}: ${JSON.stringify(pointer)}`);
  }
  return node;
}

/** An existing index (or, for add, the length or "-"); RFC 6902 forbids leading zeros and signs. */
function arrayIndex(array: unknown[], token: string, pointer: string, forAdd: boolean): number {
  if (forAdd && token === "-") return array.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) {
    throw new NotApplicable(
      `value was not a proper array index: ${JSON.stringify(token)} in ${JSON.stringify(pointer)}`,
    );
  }
  const index = Number(token);
  const limit = forAdd ? array.length : array.length - 1;
  if (index > limit) throw new NotApplicable(`Unable to access invalid index: ${index} in ${JSON.stringify(pointer)}`);
  return index;
}

function getValue(document: unknown, tokens: string[], pointer: string, what = "path"): unknown {
  if (tokens.length === 0) return document;
  const parent = parentOf(document, tokens, pointer, what);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, pointer, false)];
  if (!Object.hasOwn(parent, last)) throw new NotApplicable(`doc is missing ${what}: ${JSON.stringify(pointer)}`);
  return parent[last];
}

/** Adds (or for objects, sets) a value; returns the new document, which changes only when the root is replaced. */
function addValue(document: unknown, tokens: string[], pointer: string, value: unknown): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens, pointer);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, pointer, true), 0, value);
  else setOwn(parent, last, value);
  return document;
}

function removeValue(document: unknown, tokens: string[], pointer: string): unknown {
  if (tokens.length === 0) throw new NotApplicable("cannot remove the root of the document");
  const parent = parentOf(document, tokens, pointer);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, last, pointer, false), 1)[0];
  if (!Object.hasOwn(parent, last)) throw new NotApplicable(`doc is missing path: ${JSON.stringify(pointer)}`);
  const removed = parent[last];
  delete parent[last];
  return removed;
}

/** Replaces an existing value in place (an object keeps its key order). */
function replaceValue(document: unknown, tokens: string[], pointer: string, value: unknown): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens, pointer);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent[arrayIndex(parent, last, pointer, false)] = value;
  else if (Object.hasOwn(parent, last)) setOwn(parent, last, value);
  else throw new NotApplicable(`doc is missing key: ${JSON.stringify(pointer)}`);
  return document;
}

/**
 * `value` as it will sit at `tokens`, checked against MAX_NESTING_DEPTH: copies and moves can nest an object deeper
 * than any body did (each copy of a branch into itself doubles its depth), and everything after the patch walks it.
 */
function placeable<T>(value: T, operation: Operation): T {
  if (valueNestingBeyond(value, MAX_NESTING_DEPTH - operation.tokens.length)) {
    const from = operation.from === undefined ? "" : ` from ${JSON.stringify(operation.from)}`;
    throw errors.nestedTooDeeply(
      `the object after JSON patch operation ${operation.index} (${operation.op} ${JSON.stringify(operation.path)}${from})`,
    );
  }
  return value;
}

function applyOperation(document: unknown, operation: Operation, copied: { bytes: number }): unknown {
  const { op, path, tokens } = operation;
  switch (op) {
    case "add":
      return addValue(document, tokens, path, cloneJson(placeable(operation.value, operation)));
    case "remove":
      removeValue(document, tokens, path);
      return document;
    case "replace":
      return replaceValue(document, tokens, path, cloneJson(placeable(operation.value, operation)));
    case "test":
      if (!jsonEqual(getValue(document, tokens, path), operation.value)) {
        throw new NotApplicable(`testing value ${JSON.stringify(path)} failed: test failed`);
      }
      return document;
    case "copy": {
      const value = getValue(document, operation.fromTokens!, operation.from!, "from path");
      copied.bytes += JSON.stringify(placeable(value, operation))?.length ?? 0;
      if (copied.bytes > MAX_COPIED_BYTES) {
        throw new NotApplicable(`the copies of this patch add more than ${MAX_COPIED_BYTES} bytes to the object`);
      }
      return addValue(document, tokens, path, cloneJson(value));
    }
    case "move": {
      const from = operation.fromTokens!;
      if (operation.from === path) {
        getValue(document, from, path, "from path");
        return document;
      }
      if (tokens.length > from.length && from.every((token, i) => tokens[i] === token)) {
        throw new NotApplicable(
          `cannot move ${JSON.stringify(operation.from)} into its own child ${JSON.stringify(path)}`,
        );
      }
      placeable(getValue(document, from, operation.from!, "from path"), operation);
      const value = removeValue(document, from, operation.from!);
      return addValue(document, tokens, path, value);
    }
  }
}

/**
 * Applies an RFC 6902 patch to a copy of `document` and returns it. `patch` is the decoded request body; array
 * indexes follow the RFC (no negative indexes), "-" appends.
 */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) {
    throw errors.badRequest('the JSON patch must be an array of operations, e.g. [{"op":"add","path":"/a","value":1}]');
  }
  if (patch.length > MAX_OPERATIONS) {
    throw errors.tooManyPatchOperations(patch.length, MAX_OPERATIONS);
  }
  const operations = patch.map(decodeOperation);
  let result = cloneJson(document);
  const copied = { bytes: 0 };
  operations.forEach((operation, index) => {
    try {
      result = applyOperation(result, operation, copied);
    } catch (error) {
      if (!(error instanceof NotApplicable)) throw error;
      const from = operation.from === undefined ? "" : ` from ${JSON.stringify(operation.from)}`;
      throw errors.unprocessable(
        `JSON patch operation ${index} (${operation.op} ${JSON.stringify(operation.path)}${from}) does not apply: ${error.message}`,
      );
    }
  });
  return result;
}
