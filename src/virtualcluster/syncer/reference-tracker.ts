/** Which objects reference which (an Endpoints' reference patch naming a Secret): a Secret syncs while referenced. */
export class ReferenceTracker {
  readonly #byReferrer = new Map<string, Set<string>>();
  readonly #byTarget = new Map<string, Set<string>>();

  /** Replaces the targets of `referrer`; returns the targets that gained or lost this referrer. */
  set(referrer: string, targets: Iterable<string>): string[] {
    const next = new Set(targets);
    const previous = this.#byReferrer.get(referrer) ?? new Set<string>();
    const changed: string[] = [];
    for (const target of previous) {
      if (next.has(target)) continue;
      const referrers = this.#byTarget.get(target);
      referrers?.delete(referrer);
      if (referrers?.size === 0) this.#byTarget.delete(target);
      changed.push(target);
    }
    for (const target of next) {
      if (previous.has(target)) continue;
      let referrers = this.#byTarget.get(target);
      if (!referrers) {
        referrers = new Set();
        this.#byTarget.set(target, referrers);
      }
      referrers.add(referrer);
      changed.push(target);
    }
    if (next.size === 0) this.#byReferrer.delete(referrer);
    else this.#byReferrer.set(referrer, next);
    return changed;
  }

  /** The objects referencing `target`. */
  referrersOf(target: string): string[] {
    return [...(this.#byTarget.get(target) ?? [])];
  }

  isReferenced(target: string): boolean {
    return (this.#byTarget.get(target)?.size ?? 0) > 0;
  }
}
