// The cloud maintenance window: a weekday and a 24-hour UTC range "HH:MM-HH:MM". A range may cross midnight
// ("22:00-02:00"); an empty one ("03:00-03:00") is refused, as it would never open.

export interface TimeWindow {
  /** Minutes after midnight UTC. */
  startMinute: number;
  endMinute: number;
}

const WINDOW = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/;

/** The window, or a reason it is not one. */
export function parseTimeWindow(text: string): TimeWindow | { error: string } {
  const match = WINDOW.exec(text);
  if (!match) return { error: "must have the form HH:MM-HH:MM (24-hour clock, UTC)" };
  const [startHour, startMin, endHour, endMin] = match.slice(1).map(Number);
  if (startHour > 23 || endHour > 23) return { error: "hours must be between 00 and 23" };
  if (startMin > 59 || endMin > 59) return { error: "minutes must be between 00 and 59" };
  const window = { startMinute: startHour * 60 + startMin, endMinute: endHour * 60 + endMin };
  if (window.startMinute === window.endMinute) return { error: "start and end must differ" };
  return window;
}

/** Length of the window in minutes (crossing midnight when end < start). */
export function windowMinutes(window: TimeWindow): number {
  return (window.endMinute - window.startMinute + 24 * 60) % (24 * 60);
}

export const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;

/** Go's time.Weekday names; case-insensitive, as users write "monday" as often as "Monday". */
export function parseWeekday(text: string): number | undefined {
  const index = WEEKDAYS.findIndex((day) => day.toLowerCase() === text.toLowerCase());
  return index === -1 ? undefined : index;
}
