import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseTimeWindow, parseWeekday, windowMinutes } from "./time-window.ts";

const two = (n: number) => String(n).padStart(2, "0");

describe("parseTimeWindow()", () => {
  it("parseTimeWindow() reads every valid HH:MM-HH:MM range, crossing midnight or not", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        (h1, m1, h2, m2) => {
          fc.pre(h1 * 60 + m1 !== h2 * 60 + m2);
          const window = parseTimeWindow(`${two(h1)}:${two(m1)}-${two(h2)}:${two(m2)}`);
          assert.ok(!("error" in window));
          assert.equal(window.startMinute, h1 * 60 + m1);
          assert.equal(window.endMinute, h2 * 60 + m2);
          const length = windowMinutes(window);
          assert.ok(length > 0 && length < 24 * 60);
        },
      ),
    );
  });

  it("parseTimeWindow() refuses hours past 23 and minutes past 59", () => {
    fc.assert(
      fc.property(fc.integer({ min: 24, max: 99 }), fc.integer({ min: 60, max: 99 }), (hour, minute) => {
        assert.ok("error" in parseTimeWindow(`${hour}:00-01:00`));
        assert.ok("error" in parseTimeWindow(`01:00-${hour}:00`));
        assert.ok("error" in parseTimeWindow(`01:${minute}-02:00`));
      }),
    );
  });

  it("parseTimeWindow() refuses any text not of the form HH:MM-HH:MM", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        fc.pre(!/^\d\d:\d\d-\d\d:\d\d$/.test(text));
        assert.ok("error" in parseTimeWindow(text));
      }),
    );
    for (const text of ["1:00-02:00", "01:00 - 02:00", "01:00-02:00Z", "0100-0200", "03:00-03:00"]) {
      assert.ok("error" in parseTimeWindow(text), text);
    }
  });
});

describe("parseWeekday()", () => {
  it("parseWeekday() takes Go's weekday names in any case", () => {
    assert.equal(parseWeekday("Sunday"), 0);
    assert.equal(parseWeekday("saturday"), 6);
    assert.equal(parseWeekday("MONDAY"), 1);
    assert.equal(parseWeekday("Mon"), undefined);
    assert.equal(parseWeekday("Funday"), undefined);
  });
});
