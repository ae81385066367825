// Kubernetes timestamps are RFC 3339 in UTC with second precision: 2026-11-22T05:07:00Z.

export function formatTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
