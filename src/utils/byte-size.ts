// Sizes in bytes for people: "12.3 MiB" out, "512Mi", "2Gi", "1500000" in (binary suffixes, as Kubernetes
// quantities and etcd's documentation write them; decimal k/M/G/T too).

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
const SUFFIXES: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

/** "0 B", "812 KiB", "1.5 GiB": one decimal from MiB up. */
export function formatBytes(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit >= 2 && value < 100 ? 1 : 0;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** Bytes of "1048576", "512Mi", "2Gi", "8G"; undefined for anything else (negative, fractional bytes, unknown suffix). */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(text.trim());
  if (!match) return undefined;
  const bytes = Number(match[1]) * SUFFIXES[match[2] ?? ""];
  return Number.isSafeInteger(Math.round(bytes)) && Number.isInteger(bytes) ? bytes : undefined;
}
