// A protobuf wire-format writer: tags, varints, doubles and length-delimited values, gathered in chunks so that
// large nested messages (a whole OpenAPI document) are copied once per level with no per-byte work.

import { WIRE_BYTES, WIRE_FIXED64, WIRE_VARINT } from "./wire-reader.ts";

export class WireWriter {
  private readonly chunks: Uint8Array[] = [];
  private pending: number[] = [];
  private size = 0;

  private flush(): void {
    if (this.pending.length === 0) return;
    this.chunks.push(Uint8Array.from(this.pending));
    this.pending = [];
  }

  /** A raw varint (numbers: negative ones sign-extended to 64 bits, as Go writes int32 and int64). */
  varint(value: number | bigint): this {
    let v = BigInt.asUintN(64, BigInt(value));
    do {
      const low = Number(v & 0x7fn);
      v >>= 7n;
      this.pending.push(v > 0n ? low | 0x80 : low);
      this.size++;
    } while (v > 0n);
    return this;
  }

  tag(field: number, wire: number): this {
    return this.varint(field * 8 + wire);
  }

  raw(bytes: Uint8Array | number[]): this {
    this.flush();
    this.chunks.push(bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes));
    this.size += bytes.length;
    return this;
  }

  /** Field `field` as a varint. */
  uint(field: number, value: number | bigint | boolean): this {
    return this.tag(field, WIRE_VARINT).varint(typeof value === "boolean" ? Number(value) : value);
  }

  /** Field `field` as a little-endian 64-bit float. */
  double(field: number, value: number): this {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value, true);
    return this.tag(field, WIRE_FIXED64).raw(bytes);
  }

  /** Field `field` as length-delimited bytes. */
  bytes(field: number, value: Uint8Array | number[]): this {
    return this.tag(field, WIRE_BYTES).varint(value.length).raw(value);
  }

  string(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, "utf8"));
  }

  finish(): Uint8Array {
    this.flush();
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }
}
