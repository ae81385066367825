// Kubernetes timestamps are RFC 3339 in UTC with second precision: 2026-11-22T05:07:00Z.

// Writes in the same second share one text: every create and update formats "now", often several times.
let lastSecond = Number.NaN;
let lastText = "";

export function formatTimestamp(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    // An invalid date throws here (toISOString), as it always did, and leaves the memo alone.
    lastText = `${date.toISOString().slice(0, 19)}Z`;
    lastSecond = second;
  }
  return lastText;
}
