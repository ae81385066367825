import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StatusError } from "../../apimachinery/errors.ts";
import { WireWriter } from "./testing.ts";
import { WIRE_BYTES, WIRE_FIXED32, WIRE_FIXED64, WIRE_VARINT, WireReader } from "./wire-reader.ts";

const reader = (bytes: number[] | Uint8Array) => new WireReader(Uint8Array.from(bytes));

function badRequest(action: () => unknown, message: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof StatusError, `expected a StatusError, got ${String(error)}`);
    assert.equal(error.code, 400);
    assert.match(error.message, /^the request body is not valid Kubernetes protobuf: /);
    assert.match(error.message, message);
    return true;
  });
}

describe("WireReader", () => {
  it("uint() reads multi-byte varints and varint() the full unsigned 64-bit range", () => {
    assert.equal(reader([0xac, 0x02]).uint(), 300);
    assert.equal(reader([0x01]).uint(), 1);
    const max = reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    assert.equal(max.varint(), 2n ** 64n - 1n);
    assert.ok(max.done());
    // A non-canonical (padded) encoding is still the same number, as in Go's decoder.
    assert.equal(reader([0x81, 0x80, 0x80, 0x00]).uint(), 1);
  });

  it("int32() and int64() read negative numbers from their 10-byte sign-extended form", () => {
    const bytes = new WireWriter().varint(-5).varint(-1).finish();
    assert.equal(bytes.length, 20);
    const r = reader(bytes);
    assert.equal(r.int32(), -5);
    assert.equal(r.int64("x"), -1);
  });

  it("int64() refuses values a JSON number cannot hold exactly", () => {
    const bytes = new WireWriter().varint(2n ** 53n).finish();
    badRequest(
      () => reader(bytes).int64('"metadata.generation"'),
      /"metadata\.generation" at byte 0 is 9007199254740992/,
    );
    assert.equal(reader(new WireWriter().varint(2 ** 53 - 1).finish()).int64("x"), Number.MAX_SAFE_INTEGER);
  });

  it("uint() and varint() answer 400 for truncated and over-long varints", () => {
    badRequest(() => reader([0x80, 0x80]).uint(), /ends early at byte 2/);
    badRequest(() => reader([0x80]).varint(), /ends early/);
    badRequest(() => reader(new Array(11).fill(0x80)).varint(), /longer than 10 bytes/);
    badRequest(() => reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]).uint(), /too large/);
  });

  it("tag() splits field number and wire type, and refuses field number 0", () => {
    assert.deepEqual(reader([0x0a]).tag(), { field: 1, wire: WIRE_BYTES });
    assert.deepEqual(reader(new WireWriter().tag(17, WIRE_VARINT).finish()).tag(), { field: 17, wire: WIRE_VARINT });
    badRequest(() => reader([0x02]).tag(), /invalid field number 0 at byte 0/);
  });

  it("range() points into the buffer and refuses lengths past the end", () => {
    const r = new WireReader(Uint8Array.from([0x03, 0x61, 0x62, 0x63, 0x09]), 0, 4);
    assert.deepEqual(r.range(), { start: 1, end: 4 });
    assert.ok(r.done());
    // The reader's end bounds it, not the buffer's.
    badRequest(
      () => new WireReader(Uint8Array.from([0x04, 0x61, 0x62, 0x63, 0x09]), 0, 4).range(),
      /ends early at byte 4/,
    );
  });

  it("text() decodes UTF-8 exactly (a BOM stays) and refuses invalid sequences", () => {
    const text = Buffer.from("\ufeffhé!", "utf8");
    assert.equal(reader(new WireWriter().varint(text.length).raw(text).finish()).text(), "\ufeffhé!");
    badRequest(() => reader([0x02, 0xc3, 0x28]).text(), /string at byte 1 is not valid UTF-8/);
  });

  it("base64() encodes the bytes as JSON carries them", () => {
    assert.equal(reader([0x03, 0x00, 0x01, 0xff]).base64(), "AAH/");
    assert.equal(reader([0x00]).base64(), "");
  });

  it("skip() passes every wire type and says whether the value was non-zero", () => {
    const bytes = [0x00, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x00, 0x02, 0x61, 0x62];
    const r = reader(bytes);
    assert.equal(r.skip(WIRE_VARINT), false);
    assert.equal(r.skip(WIRE_VARINT), true);
    assert.equal(r.skip(WIRE_FIXED64), false);
    assert.equal(r.skip(WIRE_FIXED32), true);
    assert.equal(r.skip(WIRE_BYTES), false);
    assert.equal(r.skip(WIRE_BYTES), true);
    assert.ok(r.done());
    badRequest(() => reader([0, 0, 0]).skip(WIRE_FIXED32), /ends early/);
    for (const wire of [3, 4, 6, 7])
      badRequest(() => reader([0]).skip(wire), new RegExp(`unsupported wire type ${wire}`));
  });
});
