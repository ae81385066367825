// Go compares strings byte by byte in UTF-8; JavaScript compares UTF-16 code units. The two orders differ only
// around surrogate pairs, but FieldsV1 key order and conflict listings must match the Go server exactly.

/** -1, 0 or 1 as Go's strings.Compare would answer for the UTF-8 encodings of `a` and `b`. */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after every other BMP code point in UTF-8.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
