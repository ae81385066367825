// The apimachinery types whose JSON is not their message's shape: Time and MicroTime ({1: seconds, 2: nanos} ->
// RFC 3339 text), IntOrString ({1: type, 2: intVal, 3: strVal} -> number or string), Quantity ({1: string}),
// RawExtension and FieldsV1 ({1: raw JSON bytes} -> the JSON value). Each reads one message's byte range and
// answers undefined where Go's JSON would have no value (a zero time).

import { errors } from "../../apimachinery/errors.ts";
import { jsonNestingBeyond } from "../../utils/json-nesting-beyond.ts";
import { MAX_NESTING_DEPTH } from "../../utils/max-nesting-depth.ts";
import type { SpecialType } from "./message-schema.ts";
import { forbiddenProtoKey, malformedProtobuf, WIRE_BYTES, WIRE_VARINT, WireReader } from "./wire-reader.ts";

/** Go's zero time.Time, which Kubernetes writes as an empty message and JSON as null. */
const GO_ZERO_SECONDS = -62135596800;
/** 9999-12-31T23:59:59Z: RFC 3339 has four-digit years; Go refuses to write later times as JSON. */
const MAX_SECONDS = 253402300799;

/** Reads the message's fields, calling `onField` for each (it must consume the value); unknown ones are skipped. */
function eachField(
  reader: WireReader,
  path: string,
  wires: Record<number, number>,
  onField: (field: number) => void,
): void {
  while (!reader.done()) {
    const at = reader.pos;
    const { field, wire } = reader.tag();
    const expected = wires[field];
    if (expected === undefined) {
      reader.skip(wire);
      continue;
    }
    if (wire !== expected) {
      throw malformedProtobuf(
        `"${path}" has field ${field} with wire type ${wire} at byte ${at}, expected ${expected}`,
      );
    }
    onField(field);
  }
}

function time(reader: WireReader, path: string, micro: boolean): string | undefined {
  if (reader.done()) return undefined;
  let seconds = 0;
  let nanos = 0;
  eachField(reader, path, { 1: WIRE_VARINT, 2: WIRE_VARINT }, (field) => {
    if (field === 1) seconds = reader.int64(`"${path}" seconds`);
    else nanos = reader.int32();
  });
  // Go's time.Unix accepts nanoseconds outside [0, 1e9) and carries them into the seconds.
  seconds += Math.floor(nanos / 1e9);
  nanos = ((nanos % 1e9) + 1e9) % 1e9;
  if (seconds === GO_ZERO_SECONDS && nanos === 0) return undefined;
  if (seconds < GO_ZERO_SECONDS || seconds > MAX_SECONDS) {
    throw malformedProtobuf(`"${path}" is ${seconds} seconds, outside the years 0001 to 9999`);
  }
  const text = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${text}.${String(Math.floor(nanos / 1000)).padStart(6, "0")}Z` : `${text}Z`;
}

function intOrString(reader: WireReader, path: string): number | string {
  let type = 0;
  let intVal = 0;
  let strVal = "";
  eachField(reader, path, { 1: WIRE_VARINT, 2: WIRE_VARINT, 3: WIRE_BYTES }, (field) => {
    if (field === 1) type = reader.int64(`"${path}" type`);
    else if (field === 2) intVal = reader.int32();
    else strVal = reader.text();
  });
  // As Go's IntOrString.MarshalJSON: type 1 is a string, anything else the integer.
  return type === 1 ? strVal : intVal;
}

function rawJson(reader: WireReader, path: string): unknown {
  let raw: { start: number; end: number } | undefined;
  eachField(reader, path, { 1: WIRE_BYTES }, () => {
    raw = reader.range();
  });
  if (!raw || raw.end === raw.start) return undefined;
  const text = Buffer.from(reader.bytes.buffer, reader.bytes.byteOffset + raw.start, raw.end - raw.start).toString(
    "utf8",
  );
  // The object around it is measured once decoded (decode-request-body.ts); this keeps the walk below bounded.
  if (jsonNestingBeyond(text, MAX_NESTING_DEPTH) !== -1) {
    throw errors.nestedTooDeeply("the request body", `in the JSON of "${path}" at byte ${raw.start}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformedProtobuf(`"${path}" at byte ${raw.start} does not hold JSON`);
  }
  if (text.includes("__proto__") && hasProtoKey(value)) throw forbiddenProtoKey();
  return value;
}

/** Bounded by MAX_NESTING_DEPTH: the text was measured before it was parsed. */
function hasProtoKey(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Object.hasOwn(value, "__proto__")) return true;
  return Object.values(value).some(hasProtoKey);
}

function quantity(reader: WireReader, path: string): string {
  let text = "";
  eachField(reader, path, { 1: WIRE_BYTES }, () => {
    text = reader.text();
  });
  return text;
}

/** Decodes the special type in bytes [start, end) of `bytes`; undefined means "no value". */
export function decodeSpecial(type: SpecialType, bytes: Uint8Array, start: number, end: number, path: string): unknown {
  const reader = new WireReader(bytes, start, end);
  switch (type) {
    case "Time":
      return time(reader, path, false);
    case "MicroTime":
      return time(reader, path, true);
    case "IntOrString":
      return intOrString(reader, path);
    case "Quantity":
      return quantity(reader, path);
    case "RawExtension":
    case "FieldsV1":
      return rawJson(reader, path);
  }
}
