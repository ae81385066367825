/** JSON text with object keys sorted, so equal objects give equal text whatever their key order. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(item).sort()) {
      Object.defineProperty(sorted, key, {
        value: (item as Record<string, unknown>)[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return sorted;
  });
}
