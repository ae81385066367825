// Numbers JavaScript cannot hold: JSON's 1e400 and YAML's .inf parse to Infinity, which JSON.stringify stores as
// null (a key ttl of 1e400 would never expire). Kubernetes refuses them; so do we, naming the field. Only bodies
// whose text could hold one are walked, so the common request pays one regular-expression scan.

/** An exponent of three digits or more, or YAML's infinity and not-a-number. */
const LARGE_EXPONENT_OR_INF = /\d[eE]\+?\d{3}|\.(?:inf|nan)\b/i;
/** Runs of digits, each found once (a pattern like \d{309} would retry every start position inside a run). */
const DIGIT_RUNS = /\d+/g;
/** Without an exponent, a literal needs 309 digits to pass the largest double. */
const OVERFLOW_DIGITS = 309;

function mayHoldNonFinite(text: string): boolean {
  if (LARGE_EXPONENT_OR_INF.test(text)) return true;
  if (text.length < OVERFLOW_DIGITS) return false;
  for (const run of text.matchAll(DIGIT_RUNS)) if (run[0].length >= OVERFLOW_DIGITS) return true;
  return false;
}

/** The first non-finite number (or NaN) in `value` and its path (`spec.ttl`, `items[2].n`); undefined if none. */
export function findNonFinite(text: string, value: unknown): { path: string; value: number } | undefined {
  if (!mayHoldNonFinite(text)) return undefined;
  // Iterative: the nesting of a request body is bounded by its size, not by the stack.
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    if (typeof node === "number") {
      if (!Number.isFinite(node)) return { path, value: node };
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${path}[${i}]`]);
    } else if (node !== null && typeof node === "object") {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        stack.push([child, path ? `${path}.${key}` : key]);
      }
    }
  }
  return undefined;
}
