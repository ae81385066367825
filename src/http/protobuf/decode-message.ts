// Decodes a protobuf message, driven by its MessageSpec, into the JSON object Kubernetes' JSON encoding of the same
// Go struct would give: zero scalars dropped unless marked keep-zero, empty repeated fields absent, a message field
// present on the wire is an object even when empty, a field seen twice merges (messages) or replaces (scalars).
// Unknown field numbers are skipped; those that carry a non-zero value are reported in `unknown`.

import { errors } from "../../apimachinery/errors.ts";
import { childPath } from "../../apimachinery/field-errors.ts";
import type { JsonMap } from "../../apimachinery/types.ts";
import { MAX_NESTING_DEPTH } from "../../utils/max-nesting-depth.ts";
import type { FieldSpec, MessageSpec } from "./message-schema.ts";
import { decodeSpecial } from "./special-types.ts";
import { forbiddenProtoKey, malformedProtobuf, WIRE_BYTES, WIRE_VARINT, WireReader } from "./wire-reader.ts";

function isZero(value: unknown): boolean {
  return value === "" || value === 0 || value === false;
}

function expectedWire(field: FieldSpec): number {
  const type = field.type;
  if (type.kind === "scalar" && (type.scalar === "bool" || type.scalar === "int32" || type.scalar === "int64")) {
    return WIRE_VARINT;
  }
  return WIRE_BYTES;
}

function scalar(reader: WireReader, field: FieldSpec & { type: { kind: "scalar" } }, path: string): unknown {
  switch (field.type.scalar) {
    case "string":
      return reader.text();
    case "bytes":
      return reader.base64();
    case "bool":
      return reader.varint() !== 0n;
    case "int32":
      return reader.int32();
    case "int64":
      return reader.int64(`"${path}"`);
  }
}

/** One map entry message {1: key, 2: value} into `map`. */
function mapEntry(reader: WireReader, valueType: "string" | "bytes", map: JsonMap, path: string): void {
  const { start, end } = reader.range();
  const entry = new WireReader(reader.bytes, start, end);
  let key = "";
  let value = "";
  while (!entry.done()) {
    const at = entry.pos;
    const { field, wire } = entry.tag();
    if (field !== 1 && field !== 2) {
      entry.skip(wire);
      continue;
    }
    if (wire !== WIRE_BYTES) {
      throw malformedProtobuf(`an entry of "${path}" has field ${field} with wire type ${wire} at byte ${at}`);
    }
    if (field === 1) key = entry.text();
    else value = valueType === "bytes" ? entry.base64() : entry.text();
  }
  if (key === "__proto__") throw forbiddenProtoKey();
  map[key] = value;
}

/** The list or map already under `name`, or a new one put there. */
function container<T extends unknown[] | JsonMap>(out: JsonMap, name: string, make: () => T): T {
  const existing = out[name];
  if (existing !== undefined) return existing as T;
  const made = make();
  out[name] = made;
  return made;
}

/** Where a message is decoded: its path, its nesting (the top message is 1) and the unknown fields found so far. */
interface At {
  path: string;
  depth: number;
  unknown: string[];
}

function decodeField(reader: WireReader, out: JsonMap, field: FieldSpec, at: At): void {
  const { path, depth, unknown } = at;
  const type = field.type;
  if (type.kind === "map") {
    mapEntry(
      reader,
      type.value,
      container<JsonMap>(out, field.name, () => ({})),
      path,
    );
    return;
  }
  let value: unknown;
  let itemPath = path;
  if (field.repeated) itemPath = childPath(path, ((out[field.name] as unknown[] | undefined) ?? []).length);
  if (type.kind === "scalar") {
    value = scalar(reader, field as FieldSpec & { type: { kind: "scalar" } }, itemPath);
  } else if (type.kind === "special") {
    const { start, end } = reader.range();
    value = decodeSpecial(type.special, reader.bytes, start, end, itemPath);
  } else {
    const { start, end } = reader.range();
    // A message field seen twice merges into the first (protobuf's rule; repeated fields append instead).
    const existing = field.repeated ? undefined : out[field.name];
    const target = existing !== undefined && typeof existing === "object" ? (existing as JsonMap) : {};
    const nested = { path: itemPath, depth: depth + (field.repeated ? 2 : 1), unknown };
    value = decodeInto(new WireReader(reader.bytes, start, end), type.message, target, nested);
  }
  if (field.repeated) {
    container<unknown[]>(out, field.name, () => []).push(value);
  } else if (value === undefined || (isZero(value) && !field.keepZero && type.kind === "scalar")) {
    delete out[field.name];
  } else {
    out[field.name] = value;
  }
}

/**
 * Recursion follows the message tables, so its depth is the tables' nesting; the check keeps it within
 * MAX_NESTING_DEPTH should a table ever contain itself (as JSONSchemaProps does upstream).
 */
function decodeInto(reader: WireReader, spec: MessageSpec, out: JsonMap, at: At): JsonMap {
  const { path, depth, unknown } = at;
  if (depth > MAX_NESTING_DEPTH) throw errors.nestedTooDeeply("the request body", `at "${path}"`);
  while (!reader.done()) {
    const at = reader.pos;
    const { field: number, wire } = reader.tag();
    const field = spec.fields.get(number);
    if (!field) {
      if (reader.skip(wire))
        unknown.push(path ? `unknown field number ${number} in "${path}"` : `unknown field number ${number}`);
      continue;
    }
    const fieldPath = childPath(path, field.name);
    const expected = expectedWire(field);
    if (wire !== expected) {
      throw malformedProtobuf(`field "${fieldPath}" has wire type ${wire} at byte ${at}, expected ${expected}`);
    }
    decodeField(reader, out, field, { path: fieldPath, depth, unknown });
  }
  return out;
}

/**
 * Decodes the message `spec` from bytes [start, end) of `bytes` (offsets in errors count from `bytes`' start).
 * Throws only 400 BadRequest StatusErrors. Unknown non-zero fields are appended to `unknown` as texts.
 */
export function decodeMessage(
  bytes: Uint8Array,
  start: number,
  end: number,
  spec: MessageSpec,
  unknown: string[] = [],
): JsonMap {
  return decodeInto(new WireReader(bytes, start, end), spec, {}, { path: "", depth: 1, unknown });
}
