import assert from "node:assert/strict";
import { test } from "node:test";
import { isDateTime } from "./schema-ajv.ts";

test("isDateTime() accepts RFC 3339 as Go's time.RFC3339 does and refuses impossible dates", () => {
  for (const value of ["2026-11-22T05:07:00Z", "2024-02-29T23:59:59.123+05:30", "2026-01-31t00:00:00z"]) {
    assert.equal(isDateTime(value), true, value);
  }
  for (const value of [
    "2023-02-29T10:00:00Z",
    "2026-11-22 05:07:00Z",
    "2026-13-01T00:00:00Z",
    "2026-11-22T24:00:00Z",
  ]) {
    assert.equal(isDateTime(value), false, value);
  }
});

test("isDateTime() answers the same however accepted and refused values interleave", () => {
  const valid = "2026-11-22T05:07:00Z";
  const sequence = [valid, valid, "2026-11-22T05:07:00", valid, "2026-11-31T05:07:00Z", "2026-11-30T05:07:00Z", valid];
  assert.deepEqual(sequence.map(isDateTime), [true, true, false, true, false, true, true]);
});
