// One-time identifiers with an expiry (SAML assertion IDs, request IDs): add() answers false for one already seen
// and not yet expired. Bounded: past the cap the entries closest to expiry go first.

const MAX_ENTRIES = 100_000;

export class SeenIds {
  private readonly until = new Map<string, number>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** Records `id` until `untilMs`; false when it was already recorded (a replay). */
  add(id: string, untilMs: number): boolean {
    const now = this.now();
    const known = this.until.get(id);
    if (known !== undefined && known > now) return false;
    if (this.until.size >= MAX_ENTRIES) this.prune(now);
    this.until.set(id, untilMs);
    return true;
  }

  has(id: string): boolean {
    const known = this.until.get(id);
    return known !== undefined && known > this.now();
  }

  delete(id: string): void {
    this.until.delete(id);
  }

  private prune(now: number): void {
    for (const [id, until] of this.until) if (until <= now) this.until.delete(id);
    if (this.until.size < MAX_ENTRIES) return;
    const oldest = [...this.until.entries()].sort((a, b) => a[1] - b[1]).slice(0, MAX_ENTRIES / 10);
    for (const [id] of oldest) this.until.delete(id);
  }
}
