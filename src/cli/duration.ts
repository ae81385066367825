// Durations on the command line (`--expire-after 1h30m`, `90d`): whole numbers with units s, m, h and d, summed.

import { InvalidArgumentError } from "commander";

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
const DURATION = /^(?:\d+[smhd])+$/;

/** Seconds of a duration such as "45s", "1h30m" or "90d"; throws InvalidArgumentError (commander's) when malformed. */
export function parseDuration(text: string): number {
  const value = text.trim();
  if (!DURATION.test(value)) {
    throw new InvalidArgumentError(`"${text}" is not a duration: use whole numbers with s, m, h or d, e.g. 1h or 90d`);
  }
  let seconds = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+)([smhd])/g)) seconds += Number(amount) * UNITS[unit];
  if (!Number.isSafeInteger(seconds)) throw new InvalidArgumentError(`"${text}" is too long`);
  if (seconds === 0) throw new InvalidArgumentError(`"${text}" is zero: give a duration longer than 0s`);
  return seconds;
}

/** "1h30m" for 5400: the largest units first, for messages. */
export function formatDuration(seconds: number): string {
  if (seconds <= 0) return "0s";
  let rest = seconds;
  let text = "";
  for (const [unit, size] of Object.entries(UNITS).reverse()) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text;
}
