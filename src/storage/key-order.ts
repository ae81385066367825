// Keys are compared bytewise (UTF-8), as SQLite's BINARY collation and etcd do. JavaScript's `<` compares UTF-16
// code units, which disagrees for characters above U+FFFF, so code that must agree with the store uses these.

/** Compares two strings in UTF-8 byte order (which equals code point order). */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    // A surrogate starts a code point above U+FFFF, so it sorts after any unit that is a whole code point.
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

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
