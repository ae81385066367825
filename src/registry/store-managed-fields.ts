// managedFields of a create, reused across creates of the same shape. On create every field of the object becomes
// the manager's, so the entry depends only on which fields exist (map keys, list items), the manager and the
// subresource, never on leaf values, and the time. The memo keys on a shape signature that keeps every map key,
// every list in full (list keys and set values are part of field paths) and only the type of other leaves: two
// objects with one signature have the same field set. The entry is stored as JSON and parsed per use, so objects
// never share it.

import type { ManagedFieldsEntry } from "../apimachinery/types.ts";

/** Signatures kept per store; a full memo starts over (creates of many shapes get no benefit, no harm). */
const MAX_SHAPES = 256;
/**
 * The largest entry kept (signature and managedFields, in characters): a signature holds every list in full, so one
 * create of a 3 MiB body (a dry run stores nothing but still computes its managedFields) would otherwise keep 3 MiB,
 * and 256 of them most of a gigabyte per store. Larger shapes are computed each time; with this a memo holds at most
 * 4 Mi characters (4 MiB, 8 where they are not Latin-1).
 */
export const MAX_ENTRY_CHARS = 16 * 1024;

/**
 * Creates computed directly, with no signature built, once a full memo found no repeat: where each object's lists name
 * items of its own (Endpoints' addresses, an EndpointSlice's endpoints) no two creates share a shape, and the memo's
 * signatures and entries were only garbage that outlived young collections. After these it tries again.
 */
export const CREATES_WITHOUT_MEMO = 4096;

export class CreateManagedFieldsMemo {
  private readonly shapes = new Map<string, string>();
  /** Creates that found their shape since the memo last started over. */
  private hits = 0;
  /** Creates left to compute directly (CREATES_WITHOUT_MEMO). */
  private withoutMemo = 0;

  /** `compute` is the real computation; its result is reused for later creates of the same shape. */
  forCreate(
    object: object,
    manager: string,
    subresource: string | undefined,
    time: string,
    compute: () => ManagedFieldsEntry[],
  ): ManagedFieldsEntry[] {
    if (this.withoutMemo > 0) {
      this.withoutMemo--;
      return compute();
    }
    const key = `${manager}\u0000${subresource ?? ""}\u0000${shapeOf(object, true)}`;
    const known = this.shapes.get(key);
    if (known !== undefined) {
      this.hits++;
      const entries = JSON.parse(known) as ManagedFieldsEntry[];
      entries[0].time = time;
      return entries;
    }
    const entries = compute();
    // Only the usual result (one Update entry stamped with this write's time) is safe to re-stamp.
    if (entries.length === 1 && entries[0].time === time) this.keep(key, entries);
    return entries;
  }

  private keep(key: string, entries: ManagedFieldsEntry[]): void {
    const text = JSON.stringify(entries);
    if (key.length + text.length > MAX_ENTRY_CHARS) return;
    if (this.shapes.size >= MAX_SHAPES) {
      if (this.hits === 0) this.withoutMemo = CREATES_WITHOUT_MEMO;
      this.shapes.clear();
      this.hits = 0;
      if (this.withoutMemo > 0) return;
    }
    this.shapes.set(key, text);
  }
}

/**
 * The shape signature (see above); metadata.managedFields is ignored as the field manager ignores it. Recursion is
 * as deep as the object's nesting, which MAX_NESTING_DEPTH bounds (bodies are measured as they are decoded).
 */
export function shapeOf(value: unknown, top = false): string {
  if (value === null) return "n";
  // Lists in full: their items (keys, set values) are part of the field paths.
  if (Array.isArray(value)) return `a${JSON.stringify(value)}`;
  switch (typeof value) {
    case "string":
      return "s";
    case "number":
      return "d";
    case "boolean":
      return "b";
    case "object": {
      let out = "{";
      for (const key in value) {
        const child = (value as Record<string, unknown>)[key];
        if (top && key === "metadata") out += `"metadata":${metadataShape(child)},`;
        else out += `${JSON.stringify(key)}:${shapeOf(child)},`;
      }
      return `${out}}`;
    }
    case "undefined":
      return "u";
    default:
      return "?";
  }
}

function metadataShape(metadata: unknown): string {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return shapeOf(metadata);
  let out = "{";
  for (const key in metadata) {
    const child = (metadata as Record<string, unknown>)[key];
    if (key === "managedFields") continue;
    out += `${JSON.stringify(key)}:${shapeOf(child)},`;
  }
  return `${out}}`;
}
