// `Warning: 299 - "<text>"` header values (RFC 7234 warn-code 299, agent "-"), as apiserver sends them and
// kubectl/client-go print them.

// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** Header values for the given warnings: deduplicated, quoted, control characters replaced, UTF-8 on the wire. */
export function warningHeaderValues(warnings: readonly string[]): string[] {
  const seen = new Set<string>();
  const values: string[] = [];
  for (const warning of warnings) {
    const text = warning.replace(CONTROL, " ").trim();
    if (!text || seen.has(text)) continue;
    seen.add(text);
    const quoted = `299 - "${text.replace(/["\\]/g, "\\$&")}"`;
    // Node writes header strings as latin1: re-encode so non-ASCII text arrives as UTF-8 bytes.
    values.push(/^[\x20-\x7e]*$/.test(quoted) ? quoted : Buffer.from(quoted, "utf8").toString("latin1"));
  }
  return values;
}
