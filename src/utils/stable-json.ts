/**
 * JSON text with object keys sorted, so equal objects give equal text whatever their key order. Written out
 * directly (a JSON.stringify replacer building sorted copies cost twice as much) into parts joined once, so the
 * result is one flat string rather than a rope of thousands of pieces. Values are written as JSON.stringify writes
 * them (undefined and functions left out of objects, null in arrays, non-finite numbers as null, toJSON honoured).
 */
export function stableJson(value: unknown): string {
  const parts: string[] = [];
  if (!write(value, parts)) return "null";
  return parts.join("");
}

/** Appends `value`'s text to `parts`; false (nothing appended) for what JSON leaves out. */
function write(value: unknown, parts: string[]): boolean {
  switch (typeof value) {
    case "string":
      parts.push(JSON.stringify(value));
      return true;
    case "number":
      parts.push(Number.isFinite(value) ? JSON.stringify(value) : "null");
      return true;
    case "boolean":
      parts.push(value ? "true" : "false");
      return true;
    case "object":
      break;
    case "bigint":
      parts.push(JSON.stringify(value)); // throws, as JSON.stringify does
      return true;
    default:
      return false;
  }
  if (value === null) {
    parts.push("null");
    return true;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return write((value as { toJSON(): unknown }).toJSON(), parts);
  }
  if (Array.isArray(value)) {
    parts.push("[");
    for (let i = 0; i < value.length; i++) {
      if (i > 0) parts.push(",");
      if (!write(value[i], parts)) parts.push("null");
    }
    parts.push("]");
    return true;
  }
  const record = value as Record<string, unknown>;
  parts.push("{");
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const mark = parts.length;
    parts.push(first ? "" : ",", JSON.stringify(key), ":");
    if (write(record[key], parts)) first = false;
    else parts.length = mark;
  }
  parts.push("}");
  return true;
}
