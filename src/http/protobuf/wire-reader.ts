// A reader for the protobuf wire format over a range of one buffer: tags, varints, 64-bit, length-delimited and
// 32-bit values. Offsets stay absolute (byte positions in the request body), so every error can say where.
// Malformed input is a 400 BadRequest; the reader throws nothing else.

import { errors, type StatusError } from "../../apimachinery/errors.ts";

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

/** The 400 for a body that does not decode; `detail` says what and where. */
export function malformedProtobuf(detail: string): StatusError {
  return errors.badRequest(`the request body is not valid Kubernetes protobuf: ${detail}`);
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** As for JSON bodies (codec.ts): "__proto__" as a key could turn into prototype pollution in later merges. */
export function forbiddenProtoKey(): StatusError {
  return errors.badRequest('the request body contains the forbidden key "__proto__"');
}

export class WireReader {
  readonly bytes: Uint8Array;
  pos: number;
  readonly end: number;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
  }

  done(): boolean {
    return this.pos >= this.end;
  }

  private truncated(): StatusError {
    return malformedProtobuf(`the data ends early at byte ${this.end}`);
  }

  /** A varint that must fit a safe integer (tags and lengths). */
  uint(): number {
    const start = this.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw this.truncated();
      const byte = this.bytes[this.pos++];
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (Number.isSafeInteger(value)) return value;
        break;
      }
      scale *= 128;
    }
    throw malformedProtobuf(`a varint at byte ${start} is too large`);
  }

  /** A varint as the unsigned 64-bit value it encodes (at most 10 bytes). */
  varint(): bigint {
    const start = this.pos;
    let value = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw this.truncated();
      const byte = this.bytes[this.pos++];
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return BigInt.asUintN(64, value);
      shift += 7n;
    }
    throw malformedProtobuf(`a varint at byte ${start} is longer than 10 bytes`);
  }

  /** The next field's number and wire type. */
  tag(): { field: number; wire: number } {
    const start = this.pos;
    const key = this.uint();
    const field = Math.floor(key / 8);
    if (field < 1 || field > 0x1fffffff) throw malformedProtobuf(`invalid field number ${field} at byte ${start}`);
    return { field, wire: key % 8 };
  }

  /** A length-delimited value: its start and end offsets in the buffer (no copy). */
  range(): { start: number; end: number } {
    const length = this.uint();
    const start = this.pos;
    if (length > this.end - start) throw this.truncated();
    this.pos = start + length;
    return { start, end: this.pos };
  }

  /** A length-delimited UTF-8 string. */
  text(): string {
    const { start, end } = this.range();
    try {
      return UTF8.decode(this.bytes.subarray(start, end));
    } catch {
      throw malformedProtobuf(`the string at byte ${start} is not valid UTF-8`);
    }
  }

  /** A length-delimited byte string, as the base64 text JSON carries it. */
  base64(): string {
    const { start, end } = this.range();
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + start, end - start).toString("base64");
  }

  /** A varint read as a signed 64-bit integer, which must fit a JavaScript number. */
  int64(what: string): number {
    const start = this.pos;
    const value = BigInt.asIntN(64, this.varint());
    if (value > MAX_SAFE || value < -MAX_SAFE) {
      throw malformedProtobuf(`${what} at byte ${start} is ${value}, beyond the integers JSON numbers hold exactly`);
    }
    return Number(value);
  }

  /** A varint read as a signed 32-bit integer (truncated to 32 bits, as Go's decoder does). */
  int32(): number {
    return Number(BigInt.asIntN(32, this.varint()));
  }

  /** Skips a value of the given wire type; answers whether it held anything other than zeros. */
  skip(wire: number): boolean {
    switch (wire) {
      case WIRE_VARINT:
        return this.varint() !== 0n;
      case WIRE_FIXED64:
      case WIRE_FIXED32: {
        const size = wire === WIRE_FIXED64 ? 8 : 4;
        if (this.end - this.pos < size) throw this.truncated();
        const nonZero = this.bytes.subarray(this.pos, this.pos + size).some((b) => b !== 0);
        this.pos += size;
        return nonZero;
      }
      case WIRE_BYTES: {
        const { start, end } = this.range();
        return end > start;
      }
      default:
        throw malformedProtobuf(`unsupported wire type ${wire} before byte ${this.pos}`);
    }
  }
}
