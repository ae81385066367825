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
    entry.failures++;
    entry.lastMs = now;
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  clear(id: string): void {
    this.entries.delete(id);
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
    if (address) this.byAddress.fail(address, now);
  }

  succeeded(username: string): void {
    this.byUsername.clear(username);
  }
}
