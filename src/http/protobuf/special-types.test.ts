import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StatusError } from "../../apimachinery/errors.ts";
import type { SpecialType } from "./message-schema.ts";
import { decodeSpecial } from "./special-types.ts";
import { WireWriter } from "./testing.ts";

const decode = (type: SpecialType, bytes: Uint8Array) => decodeSpecial(type, bytes, 0, bytes.length, "spec.x");
const w = () => new WireWriter();

function badRequest(action: () => unknown, message: RegExp): void {
  assert.throws(
    action,
    (error: unknown) => error instanceof StatusError && error.code === 400 && message.test(error.message),
  );
}

describe("decodeSpecial()", () => {
  it("decodeSpecial() writes Time as RFC 3339 in UTC to the second, as Kubernetes' JSON does", () => {
    assert.equal(decode("Time", w().uint(1, 1700000000).finish()), "2023-11-14T22:13:20Z");
    assert.equal(decode("Time", w().uint(1, 1700000000).uint(2, 999_999_999).finish()), "2023-11-14T22:13:20Z");
    // 1970-01-01 is a time like any other (Go writes seconds 0 explicitly); an empty message is Go's zero time.
    assert.equal(decode("Time", w().uint(1, 0).finish()), "1970-01-01T00:00:00Z");
    assert.equal(decode("Time", w().finish()), undefined);
    assert.equal(decode("Time", w().uint(1, -62135596800).finish()), undefined);
    assert.equal(decode("Time", w().uint(1, -1).finish()), "1969-12-31T23:59:59Z");
  });

  it("decodeSpecial() writes MicroTime with six fraction digits and carries nanoseconds past a second", () => {
    assert.equal(
      decode("MicroTime", w().uint(1, 1700000000).uint(2, 123_456_789).finish()),
      "2023-11-14T22:13:20.123456Z",
    );
    assert.equal(decode("MicroTime", w().uint(1, 1700000000).finish()), "2023-11-14T22:13:20.000000Z");
    assert.equal(
      decode("MicroTime", w().uint(1, 1700000000).uint(2, 1_500_000_000).finish()),
      "2023-11-14T22:13:21.500000Z",
    );
    assert.equal(decode("MicroTime", w().uint(1, 1700000000).uint(2, -1000).finish()), "2023-11-14T22:13:19.999999Z");
  });

  it("decodeSpecial() refuses times outside the years 0001 to 9999", () => {
    badRequest(() => decode("Time", w().uint(1, 253402300800).finish()), /"spec\.x" is 253402300800 seconds/);
    badRequest(() => decode("Time", w().uint(1, -62135596801).finish()), /outside the years 0001 to 9999/);
  });

  it("decodeSpecial() reads IntOrString by its type: 1 is the string, anything else the integer", () => {
    assert.equal(decode("IntOrString", w().uint(1, 0).uint(2, 8080).string(3, "").finish()), 8080);
    assert.equal(decode("IntOrString", w().uint(1, 1).uint(2, 0).string(3, "https").finish()), "https");
    assert.equal(decode("IntOrString", w().uint(2, -3).finish()), -3);
    assert.equal(decode("IntOrString", w().finish()), 0);
    assert.equal(decode("IntOrString", w().uint(1, 1).finish()), "");
  });

  it("decodeSpecial() reads Quantity as its string and RawExtension and FieldsV1 as the JSON they hold", () => {
    assert.equal(decode("Quantity", w().string(1, "100Mi").finish()), "100Mi");
    const fields = { "f:metadata": { "f:labels": { "f:app": {} } } };
    assert.deepEqual(decode("FieldsV1", w().string(1, JSON.stringify(fields)).finish()), fields);
    assert.deepEqual(decode("RawExtension", w().string(1, '{"a":[1,"b"]}').finish()), { a: [1, "b"] });
    assert.equal(decode("RawExtension", w().finish()), undefined);
  });

  it("decodeSpecial() answers 400 for raw bytes that are not JSON or hold a __proto__ key", () => {
    badRequest(() => decode("FieldsV1", w().string(1, "{nope").finish()), /"spec\.x" at byte 2 does not hold JSON/);
    badRequest(
      () => decode("RawExtension", w().string(1, '{"a":{"__proto__":{}}}').finish()),
      /forbidden key "__proto__"/,
    );
  });

  it("decodeSpecial() skips unknown fields and answers 400 for a known field with the wrong wire type", () => {
    assert.equal(decode("Time", w().string(9, "x").uint(1, 60).finish()), "1970-01-01T00:01:00Z");
    badRequest(
      () => decode("Time", w().string(1, "x").finish()),
      /"spec\.x" has field 1 with wire type 2 at byte 0, expected 0/,
    );
  });
});
