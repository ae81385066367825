import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { currentOrNextWindow, isWindowOpen } from "./maintenance-window.ts";
import { cloudSettingsOf } from "./system-settings.ts";

const windowOf = (dayOfWeek: string, timeWindow: string) => {
  const window = cloudSettingsOf({ maintenanceWindow: { dayOfWeek, timeWindow } }).maintenanceWindow;
  assert.ok(window);
  return window;
};

describe("maintenance window", () => {
  // 2026-11-29 is a Sunday.
  const sunday = (time: string) => new Date(`2026-11-29T${time}:00Z`);

  it("currentOrNextWindow() gives this week's window while it is open, next week's once it has closed", () => {
    const window = windowOf("Sunday", "02:00-04:00");
    assert.deepEqual(currentOrNextWindow(window, sunday("01:59")), {
      start: new Date("2026-11-29T02:00:00Z"),
      end: new Date("2026-11-29T04:00:00Z"),
    });
    assert.equal(isWindowOpen(window, sunday("01:59")), false);
    assert.equal(isWindowOpen(window, sunday("02:00")), true);
    assert.equal(isWindowOpen(window, sunday("03:59")), true);
    assert.equal(isWindowOpen(window, sunday("04:00")), false);
    assert.deepEqual(currentOrNextWindow(window, sunday("04:00")).start, new Date("2026-12-06T02:00:00Z"));
  });

  it("currentOrNextWindow() opens a window that crosses midnight on its weekday and closes it the next day", () => {
    const window = windowOf("saturday", "22:00-02:00");
    // Sunday 01:00 is inside Saturday's window.
    assert.equal(isWindowOpen(window, sunday("01:00")), true);
    assert.deepEqual(currentOrNextWindow(window, sunday("01:00")), {
      start: new Date("2026-11-28T22:00:00Z"),
      end: new Date("2026-11-29T02:00:00Z"),
    });
    assert.equal(isWindowOpen(window, sunday("02:00")), false);
    assert.deepEqual(currentOrNextWindow(window, sunday("02:00")).start, new Date("2026-12-05T22:00:00Z"));
  });

  it("isWindowOpen() holds nothing back without a window", () => {
    assert.equal(isWindowOpen(undefined, sunday("12:00")), true);
  });

  it("currentOrNextWindow() is open at now or starts after it, within a week, on the window's weekday", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 1439 }),
        fc.integer({ min: 1, max: 1439 }),
        fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }),
        (dayOfWeek, startMinute, length, now) => {
          const window = { dayOfWeek, startMinute, endMinute: (startMinute + length) % 1440 };
          const { start, end } = currentOrNextWindow(window, now);
          assert.equal(start.getUTCDay(), dayOfWeek);
          assert.equal(start.getUTCHours() * 60 + start.getUTCMinutes(), startMinute);
          assert.equal(end.getTime() - start.getTime(), length * 60_000);
          assert.ok(end.getTime() > now.getTime());
          assert.ok(start.getTime() - now.getTime() < 7 * 24 * 3600_000);
          assert.equal(isWindowOpen(window, now), start.getTime() <= now.getTime());
        },
      ),
    );
  });
});
