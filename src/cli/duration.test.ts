import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidArgumentError } from "commander";
import fc from "fast-check";
import { formatDuration, parseDuration } from "./duration.ts";

describe("parseDuration()", () => {
  it("parseDuration() reads s, m, h and d, summed", () => {
    assert.equal(parseDuration("45s"), 45);
    assert.equal(parseDuration("1h"), 3600);
    assert.equal(parseDuration("1h30m"), 5400);
    assert.equal(parseDuration("90d"), 90 * 86_400);
    assert.equal(parseDuration("1d1h1m1s"), 90_061);
  });

  it("parseDuration() refuses numbers without units, zero, negatives, fractions and junk", () => {
    for (const input of ["", "10", "0s", "0h0m", "-1h", "1.5h", "1y", "h", "1 h", "1hx"]) {
      assert.throws(() => parseDuration(input), InvalidArgumentError, input);
    }
  });

  it("parseDuration() inverts formatDuration() for any positive number of seconds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 * 365 * 86_400 }), (seconds) => {
        assert.equal(parseDuration(formatDuration(seconds)), seconds);
      }),
    );
  });

  it("parseDuration() either returns a positive whole number of seconds or throws InvalidArgumentError", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[0-9smhd]{0,8}$/)), (input) => {
        try {
          const seconds = parseDuration(input);
          assert.ok(Number.isSafeInteger(seconds) && seconds > 0);
        } catch (error) {
          assert.ok(error instanceof InvalidArgumentError);
        }
      }),
    );
  });
});
