// Go's time.ParseDuration, exactly: the config's secretStore.syncInterval is read by Go tooling in the original, so
// "1h30m", "1.5h", "300ms", "-2m" and a bare "0" are valid; "1d", "1 h" and "" are not.

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go's int64 limit: larger durations overflow in Go and are refused there. */
const MAX_NANOS = (1n << 63n) - 1n;

const PART = /^(\d*)(?:\.(\d*))?([^\d.]+)/;

/** Nanoseconds as a bigint, or undefined when Go would refuse the text. */
export function parseGoDuration(text: string): bigint | undefined {
  let rest = text;
  let negative = false;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    negative = rest[0] === "-";
    rest = rest.slice(1);
  }
  if (rest === "0") return 0n;
  if (rest === "") return undefined;
  let total = 0n;
  while (rest !== "") {
    const match = PART.exec(rest);
    if (!match) return undefined;
    const [whole, integer, fraction, unit] = match;
    if (integer === "" && (fraction === undefined || fraction === "")) return undefined;
    const scale = UNIT_NANOS[unit];
    if (scale === undefined) return undefined;
    let nanos = BigInt(integer || "0") * scale;
    if (fraction) {
      // Go truncates the fraction's contribution towards zero.
      nanos += (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
    }
    total += nanos;
    if (total > MAX_NANOS + (negative ? 1n : 0n)) return undefined;
    rest = rest.slice(whole.length);
  }
  return negative ? -total : total;
}

/** Formats nanoseconds as Go's Duration.String() does ("1h30m0s", "1.5s", "300ms", "0s"). */
export function formatGoDuration(nanos: bigint): string {
  if (nanos === 0n) return "0s";
  const sign = nanos < 0n ? "-" : "";
  const n = nanos < 0n ? -nanos : nanos;
  if (n < 1_000_000_000n) {
    const [unit, scale] = n < 1_000n ? ["ns", 1n] : n < 1_000_000n ? ["µs", 1_000n] : ["ms", 1_000_000n];
    return `${sign}${decimal(n, scale as bigint)}${unit}`;
  }
  const hours = n / 3_600_000_000_000n;
  const minutes = (n / 60_000_000_000n) % 60n;
  const seconds = n % 60_000_000_000n;
  let out = `${decimal(seconds, 1_000_000_000n)}s`;
  if (hours > 0n || minutes > 0n) out = `${minutes}m${out}`;
  if (hours > 0n) out = `${hours}h${out}`;
  return `${sign}${out}`;
}

function decimal(value: bigint, scale: bigint): string {
  const whole = value / scale;
  const fraction = value % scale;
  if (fraction === 0n) return String(whole);
  const digits = String(scale).length - 1;
  return `${whole}.${String(fraction).padStart(digits, "0").replace(/0+$/, "")}`;
}
