// Throttles failed logins, per username and per client address: after a number of failures each further attempt
// must wait, doubling from one second up to a cap; a success clears the username's count, quiet time forgets it.
// Bounded memory: the oldest entries go first when a map is full.

export interface ThrottleOptions {
  failuresPerUsername?: number;
  failuresPerAddress?: number;
  maxDelaySeconds?: number;
  /** Failures older than this are forgotten. */
  forgetAfterSeconds?: number;
  maxEntries?: number;
  now?: () => number;
}

export interface ThrottleChange {
  counter: "username" | "address";
  id: string;
  /** true: one more failure; false: the count was cleared by a success. */
  failed: boolean;
  at: number;
}

type CounterOptions = Required<Omit<ThrottleOptions, "failuresPerUsername" | "failuresPerAddress">>;

interface Entry {
  failures: number;
  lastMs: number;
}

class FailureCounter {
  private readonly entries = new Map<string, Entry>();
  private readonly limit: number;
  private readonly options: CounterOptions;

  constructor(limit: number, options: CounterOptions) {
    this.limit = limit;
    this.options = options;
  }

  private entry(id: string, now: number): Entry | undefined {
    const entry = this.entries.get(id);
    if (entry && now - entry.lastMs > this.options.forgetAfterSeconds * 1000) {
      this.entries.delete(id);
      return undefined;
    }
    return entry;
  }

  /** Seconds to wait before the next attempt; 0 = go ahead. */
  retryAfter(id: string, now: number): number {
    const entry = this.entry(id, now);
    if (!entry || entry.failures < this.limit) return 0;
    const delay = Math.min(this.options.maxDelaySeconds, 2 ** (entry.failures - this.limit));
    const remaining = entry.lastMs + delay * 1000 - now;
    return remaining > 0 ? Math.ceil(remaining / 1000) : 0;
  }

  fail(id: string, now: number): void {
    const entry = this.entry(id, now) ?? { failures: 0, lastMs: now };
    this.set(id, entry.failures + 1, now);
  }

  /** Sets a count (another replica's, shared through the store), keeping the newer of two. */
  set(id: string, failures: number, lastMs: number): void {
    this.entries.delete(id);
    this.entries.set(id, { failures, lastMs });
    if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** True when there was a count to clear. */
  clear(id: string): boolean {
    return this.entries.delete(id);
  }
}

export class LoginThrottle {
  private readonly byUsername: FailureCounter;
  private readonly byAddress: FailureCounter;
  private readonly now: () => number;

  constructor(options: ThrottleOptions = {}) {
    const shared = {
      maxDelaySeconds: options.maxDelaySeconds ?? 900,
      forgetAfterSeconds: options.forgetAfterSeconds ?? 3600,
      maxEntries: options.maxEntries ?? 10_000,
      now: options.now ?? Date.now,
    };
    this.now = shared.now;
    this.byUsername = new FailureCounter(options.failuresPerUsername ?? 5, shared);
    this.byAddress = new FailureCounter(options.failuresPerAddress ?? 20, shared);
  }

  /** Seconds the caller must wait (0: may try now). */
  retryAfter(username: string, address: string | undefined): number {
    const now = this.now();
    return Math.max(this.byUsername.retryAfter(username, now), address ? this.byAddress.retryAfter(address, now) : 0);
  }

  failed(username: string, address: string | undefined): void {
    const now = this.now();
    this.byUsername.fail(username, now);
    this.listener?.({ counter: "username", id: username, failed: true, at: now });
    if (address) {
      this.byAddress.fail(address, now);
      this.listener?.({ counter: "address", id: address, failed: true, at: now });
    }
  }

  succeeded(username: string): void {
    // Only a count to clear is worth telling the other replicas (most successes follow no failure).
    if (this.byUsername.clear(username)) {
      this.listener?.({ counter: "username", id: username, failed: false, at: this.now() });
    }
  }

  /** Reports every local failure and success (replicas share their counts through the store). */
  onChange(listener: (change: ThrottleChange) => void): void {
    this.listener = listener;
  }

  /** Applies a count another replica stored (failures 0: cleared). */
  apply(counter: ThrottleChange["counter"], id: string, failures: number, lastMs: number): void {
    const target = counter === "username" ? this.byUsername : this.byAddress;
    if (failures <= 0) target.clear(id);
    else target.set(id, failures, lastMs);
  }

  private listener?: (change: ThrottleChange) => void;
}
