import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultSettings, LiveSettings } from "../../config/settings.ts";
import { cloudSettingsOf } from "../../config/system-settings.ts";
import { MaintenanceScheduler, type WindowTask } from "./maintenance.ts";

/** Settings with a window, and a clock the test moves. */
function fixture(dayOfWeek: string | undefined, timeWindow = "02:00-04:00") {
  const settings = defaultSettings();
  settings.cloud = cloudSettingsOf(dayOfWeek ? { maintenanceWindow: { dayOfWeek, timeWindow } } : {});
  let now = new Date("2026-11-29T01:00:00Z"); // a Sunday
  const runs: string[] = [];
  const task = (name: string, when: WindowTask["when"], due?: () => boolean): WindowTask => ({
    name,
    when,
    due,
    run: async (at) => {
      runs.push(`${name}@${at.toISOString().slice(11, 16)}`);
      return "done";
    },
  });
  return {
    runs,
    task,
    set: (iso: string) => {
      now = new Date(iso);
    },
    scheduler: (tasks: WindowTask[]) =>
      new MaintenanceScheduler({ settings: new LiveSettings(settings), tasks, now: () => now }),
  };
}

describe("MaintenanceScheduler", () => {
  it("MaintenanceScheduler runs window tasks once per open window and never outside it", async () => {
    const f = fixture("Sunday");
    const scheduler = f.scheduler([f.task("rebuild", "window")]);
    await scheduler.check();
    assert.equal(scheduler.isOpen(), false);
    assert.deepEqual(f.runs, [], "01:00 is before the window");
    f.set("2026-11-29T02:00:00Z");
    assert.equal(scheduler.isOpen(), true);
    await scheduler.check();
    f.set("2026-11-29T03:30:00Z");
    await scheduler.check();
    assert.deepEqual(f.runs, ["rebuild@02:00"], "once in the occurrence");
    f.set("2026-11-29T04:00:00Z");
    await scheduler.check();
    f.set("2026-12-06T02:10:00Z");
    await scheduler.check();
    assert.deepEqual(f.runs, ["rebuild@02:00", "rebuild@02:10"], "again in next week's window");
  });

  it("MaintenanceScheduler holds a due task until the window opens", async () => {
    const f = fixture("Sunday");
    let due = true;
    const scheduler = f.scheduler([f.task("rotation", "due", () => due)]);
    await scheduler.check();
    assert.deepEqual(f.runs, []);
    f.set("2026-11-29T02:30:00Z");
    await scheduler.check();
    due = false;
    await scheduler.check();
    assert.deepEqual(f.runs, ["rotation@02:30"]);
  });

  it("MaintenanceScheduler without a window runs due tasks when due and no window-only task", async () => {
    const f = fixture(undefined);
    const scheduler = f.scheduler([f.task("rebuild", "window"), f.task("rotation", "due", () => true)]);
    assert.equal(scheduler.isOpen(), true);
    await scheduler.check();
    assert.deepEqual(f.runs, ["rotation@01:00"]);
  });

  it("MaintenanceScheduler asks a due task at every check, so its schedule starts before the first window", async () => {
    const f = fixture("Sunday");
    const asked: string[] = [];
    const scheduler = f.scheduler([
      f.task("rotation", "due", () => {
        asked.push("asked");
        return false;
      }),
    ]);
    await scheduler.check();
    assert.deepEqual(asked, ["asked"], "asked at 01:00, before the window");
    assert.deepEqual(f.runs, [], "and not run");
  });
});
