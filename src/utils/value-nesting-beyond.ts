// The nesting of a decoded value, measured without recursion (the value may be deeper than the stack allows).

/**
 * Whether `value` nests arrays and objects more than `limit` levels deep (`1` is 0 levels, `{}` one, `[{}]`
 * two). Stops at the first container past the limit, so a cyclic value is reported as too deep.
 */
export function valueNestingBeyond(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  const depths: number[] = [0];
  while (stack.length > 0) {
    const node = stack.pop();
    const depth = depths.pop() as number;
    if (node === null || typeof node !== "object") continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === "object") {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
