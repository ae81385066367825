/**
 * JSON text with object keys sorted, so equal objects give equal text whatever their key order. Written out
 * directly: it runs for every synced object, and a JSON.stringify replacer building sorted copies cost twice as
 * much. Values are written as JSON.stringify writes them (undefined and functions left out of objects, null in
 * arrays, non-finite numbers as null, toJSON honoured).
 */
export function stableJson(value: unknown): string {
  return write(value) ?? "null";
}

function write(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "object":
      break;
    case "bigint":
      return JSON.stringify(value); // throws, as JSON.stringify does
    default:
      return undefined;
  }
  if (value === null) return "null";
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return write((value as { toJSON(): unknown }).toJSON());
  }
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) text += `${i === 0 ? "" : ","}${write(value[i]) ?? "null"}`;
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = "{";
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const item = write(record[key]);
    if (item === undefined) continue;
    text += `${first ? "" : ","}${JSON.stringify(key)}:${item}`;
    first = false;
  }
  return `${text}}`;
}
