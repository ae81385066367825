// When the cloud maintenance window is open: a weekly window that opens on its weekday at its start time (UTC) and
// closes at its end time, the next day when it crosses midnight. Without a window, disruptive work is never held
// back (the window is "always open").

import type { MaintenanceWindowSettings } from "./system-settings.ts";
import { windowMinutes } from "./time-window.ts";

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
const WEEK_MS = 7 * DAY_MS;

export interface WindowOccurrence {
  start: Date;
  end: Date;
}

/** The occurrence that is open at `now`, else the next one to open. */
export function currentOrNextWindow(window: MaintenanceWindowSettings, now: Date): WindowOccurrence {
  const length = windowMinutes(window) * MINUTE_MS;
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const daysBack = (now.getUTCDay() - window.dayOfWeek + 7) % 7;
  // This week's opening (on or before today); if it has closed already, next week's.
  let start = midnight - daysBack * DAY_MS + window.startMinute * MINUTE_MS;
  if (start > now.getTime()) start -= WEEK_MS;
  if (start + length <= now.getTime()) start += WEEK_MS;
  return { start: new Date(start), end: new Date(start + length) };
}

/** True when disruptive work may run at `now`: no window is set, or `now` is inside it. */
export function isWindowOpen(window: MaintenanceWindowSettings | undefined, now: Date): boolean {
  if (!window) return true;
  return currentOrNextWindow(window, now).start.getTime() <= now.getTime();
}
