// The nesting of JSON text, found without parsing it: one pass that skips strings and counts brackets, cheap enough
// to run before every JSON.parse of a request body.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** The index of the quote closing the string whose text starts at `from` (text.length when it never closes). */
function stringEnd(text: string, from: number): number {
  let at = from;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    // A quote after an odd number of backslashes is escaped and part of the string.
    let backslashes = 0;
    for (let i = quote - 1; i >= at && text.charCodeAt(i) === BACKSLASH; i--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

function openingBracketsAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ["{", "["]) {
    for (let i = text.indexOf(bracket); i !== -1; i = text.indexOf(bracket, i + 1)) if (++count > limit) return false;
  }
  return true;
}

/**
 * The index of the first `[` or `{` in JSON `text` that opens more than `limit` nested levels, or -1 when the
 * text stays within `limit` (`1` is 0 levels, `{}` one, `[{}]` two). Exact for valid JSON; malformed text is
 * scanned the same way and left for JSON.parse to refuse.
 */
export function jsonNestingBeyond(text: string, limit: number): number {
  // Every level needs its own opening bracket: a text with no more of them than the limit (strings included) is
  // settled by counting, which indexOf does several times faster than the scan below.
  if (openingBracketsAtMost(text, limit)) return -1;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i + 1);
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > limit) return i;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
  return -1;
}
