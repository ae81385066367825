// A least-recently-used map of encoded JSON texts bounded by their total size. Keys name one stored version
// (key and revision), so an entry can never go stale: a write makes a new revision and therefore a new key.

/** Rough per-entry cost beyond the two strings (Map slot, string headers). */
const ENTRY_OVERHEAD = 64;

export class EncodedCache {
  readonly maxBytes: number;
  private readonly entries = new Map<string, string>();
  private bytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = Math.max(0, maxBytes);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes accounted for the entries held now (always <= maxBytes). */
  get usedBytes(): number {
    return this.bytes;
  }

  get(key: string): string | undefined {
    const text = this.entries.get(key);
    if (text !== undefined) {
      // Move to the most recent end.
      this.entries.delete(key);
      this.entries.set(key, text);
    }
    return text;
  }

  set(key: string, text: string): void {
    const cost = key.length + text.length + ENTRY_OVERHEAD;
    if (cost > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.bytes -= key.length + old.length + ENTRY_OVERHEAD;
    }
    this.entries.set(key, text);
    this.bytes += cost;
    for (const [oldestKey, oldestText] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldestKey);
      this.bytes -= oldestKey.length + oldestText.length + ENTRY_OVERHEAD;
    }
  }
}
