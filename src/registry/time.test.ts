import assert from "node:assert/strict";
import { test } from "node:test";
import { formatTimestamp } from "./time.ts";

test("formatTimestamp() writes RFC 3339 in UTC with second precision", () => {
  assert.equal(formatTimestamp(new Date("2026-11-22T05:07:00.999Z")), "2026-11-22T05:07:00Z");
  assert.equal(formatTimestamp(new Date("2026-11-22T07:07:00+02:00")), "2026-11-22T05:07:00Z");
});

test("formatTimestamp() gives each second its own text, however the calls interleave", () => {
  const times = ["2026-11-22T05:07:00.100Z", "2026-11-22T05:07:00.900Z", "2026-11-22T05:07:01.000Z"];
  assert.deepEqual(
    [...times, times[0], "1969-12-31T23:59:59.500Z"].map((t) => formatTimestamp(new Date(t))),
    [
      "2026-11-22T05:07:00Z",
      "2026-11-22T05:07:00Z",
      "2026-11-22T05:07:01Z",
      "2026-11-22T05:07:00Z",
      "1969-12-31T23:59:59Z",
    ],
  );
});

test("formatTimestamp() refuses an invalid date, also right after a valid one", () => {
  formatTimestamp(new Date("2026-11-22T05:07:00Z"));
  assert.throws(() => formatTimestamp(new Date("not a date")), RangeError);
  assert.equal(formatTimestamp(new Date("2026-11-22T05:07:00Z")), "2026-11-22T05:07:00Z");
});
