// Go, etcd and SQLite's BINARY collation compare strings byte by byte in UTF-8; JavaScript compares UTF-16 code
// units. The two orders differ only around surrogate pairs, but storage key order, FieldsV1 key order and conflict
// listings must match the Go server exactly.

/**
 * Negative, zero or positive as the UTF-8 encodings of `a` and `b` compare bytewise (Go's strings.Compare).
 * A lone surrogate sorts as the start of a pair would: after every other BMP unit.
 */
export function compareUtf8(a: string, b: string): number {
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
