// Dates as people read them in lists: relative ("3 minutes ago", "in 7 days"), the exact time on hover. Rounded to
// the nearest unit, and days up to 26 of them (no weeks), so a key made now that lasts 7 days says "in 7 days".

const MINUTE = 60;
const HOUR = 3600;
const DAY = 24 * HOUR;

/** The unit a span of `seconds` is told in, and how many of it. */
function unitOf(seconds: number): [Intl.RelativeTimeFormatUnit, number] {
  const size = Math.abs(seconds);
  if (size < 45) return ["second", seconds];
  if (size < 45 * MINUTE) return ["minute", seconds / MINUTE];
  if (size < 22 * HOUR) return ["hour", seconds / HOUR];
  if (size < 26 * DAY) return ["day", seconds / DAY];
  if (size < 320 * DAY) return ["month", seconds / (30 * DAY)];
  return ["year", seconds / (365 * DAY)];
}

export function relativeTime(iso: string, now = Date.now()): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = (at - now) / 1000;
  if (Math.abs(seconds) < 10) return "just now";
  const [unit, amount] = unitOf(seconds);
  const rounded = Math.round(amount);
  return new Intl.RelativeTimeFormat("en", { numeric: "always" }).format(rounded === 0 ? 0 : rounded, unit);
}

export function exactTime(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toLocaleString("en", { dateStyle: "medium", timeStyle: "long" });
}

/** Whether `iso` falls within `days` days from now (and is not past). */
export function withinDays(iso: string | undefined, days: number, now = Date.now()): boolean {
  const at = iso ? Date.parse(iso) : Number.NaN;
  return !Number.isNaN(at) && at > now && at - now <= days * DAY * 1000;
}
