// The range bound for a prefix scan. Keys order bytewise (UTF-8), as SQLite's BINARY collation and etcd compare
// them; JavaScript code that must agree with that order uses compareUtf8 (src/utils/utf8-compare.ts).

/**
 * The smallest byte string greater than every key starting with `prefix`, for a `key < end` range bound.
 * It may not be valid UTF-8, so SQL compares it as `CAST(? AS TEXT)` (BINARY collation is a plain memcmp).
 */
export function prefixEnd(prefix: string): Uint8Array {
  const bytes = Buffer.from(prefix, "utf8");
  // Valid UTF-8 never contains 0xff, so [0xff] is above every key and the last byte of a prefix can always grow.
  if (bytes.length === 0) return Uint8Array.of(0xff);
  bytes[bytes.length - 1]++;
  return bytes;
}
