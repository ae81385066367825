// Throttles failed logins. Three counts, each letting a number of failures pass and then making every further
// attempt wait, doubling from one second up to a cap:
//   - per username at one client address (5): what stops guessing one account from one place, first, so a wrong
//     password sent from elsewhere never locks the real user out (Keycloak and Dex count per user and address too);
//   - per client address over every username (20): one address spraying many accounts;
//   - per username from every address (100): far above what one address can cause (stopped after 5, then about a
//     dozen an hour), so only a guess spread over many addresses meets it.
// IPv6 addresses count per /64 (one host owns a whole /64). A success clears that username's counts (at that
// address and overall); an hour of quiet forgets a count. Bounded memory: the oldest entries go first.

export interface ThrottleOptions {
  /** Failures of one username from one client address before it waits (default 5). */
  failuresPerPair?: number;
  /** Failures from one client address over every username (default 20). */
  failuresPerAddress?: number;
  /** Failures of one username from every address (default 100). */
  failuresPerUsername?: number;
  maxDelaySeconds?: number;
  /** Failures older than this are forgotten. */
  forgetAfterSeconds?: number;
  maxEntries?: number;
  now?: () => number;
}

export interface ThrottleChange {
  counter: "pair" | "username" | "address";
  id: string;
  /** true: one more failure; false: the count was cleared by a success. */
  failed: boolean;
  at: number;
}

type CounterOptions = Required<Omit<ThrottleOptions, "failuresPerPair" | "failuresPerUsername" | "failuresPerAddress">>;

/** What a client address counts as: an IPv4 address (also IPv4-mapped), or the /64 of an IPv6 one. */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(":")) return address;
  const [head, tail = ""] = address.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group || "0", 16).toString(16))
    .join(":")}::/64`;
}

/** The pair counter's id: a username at one client (never ambiguous: usernames hold no newline at login). */
const pairId = (username: string, client: string | undefined) => `${username}\n${client ?? ""}`;

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
  private readonly byPair: FailureCounter;
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
    this.byPair = new FailureCounter(options.failuresPerPair ?? 5, shared);
    this.byUsername = new FailureCounter(options.failuresPerUsername ?? 100, shared);
    this.byAddress = new FailureCounter(options.failuresPerAddress ?? 20, shared);
  }

  /** Seconds the caller must wait (0: may try now). */
  retryAfter(username: string, address: string | undefined): number {
    const now = this.now();
    const client = address ? clientKey(address) : undefined;
    return Math.max(
      this.byPair.retryAfter(pairId(username, client), now),
      this.byUsername.retryAfter(username, now),
      client ? this.byAddress.retryAfter(client, now) : 0,
    );
  }

  failed(username: string, address: string | undefined): void {
    const now = this.now();
    const client = address ? clientKey(address) : undefined;
    this.count(this.byPair, "pair", pairId(username, client), now);
    this.count(this.byUsername, "username", username, now);
    if (client) this.count(this.byAddress, "address", client, now);
  }

  /** The username logged in (at `address`): its counts there and overall are cleared. */
  succeeded(username: string, address?: string): void {
    const at = this.now();
    const pair = pairId(username, address ? clientKey(address) : undefined);
    // Only a count to clear is worth telling the other replicas (most successes follow no failure).
    if (this.byPair.clear(pair)) this.listener?.({ counter: "pair", id: pair, failed: false, at });
    if (this.byUsername.clear(username)) this.listener?.({ counter: "username", id: username, failed: false, at });
  }

  /** Reports every local failure and success (replicas share their counts through the store). */
  onChange(listener: (change: ThrottleChange) => void): void {
    this.listener = listener;
  }

  /** Applies a count another replica stored (failures 0: cleared). */
  apply(counter: ThrottleChange["counter"], id: string, failures: number, lastMs: number): void {
    const target = { pair: this.byPair, username: this.byUsername, address: this.byAddress }[counter];
    if (!target) return;
    if (failures <= 0) target.clear(id);
    else target.set(id, failures, lastMs);
  }

  private count(counter: FailureCounter, kind: ThrottleChange["counter"], id: string, at: number): void {
    counter.fail(id, at);
    this.listener?.({ counter: kind, id, failed: true, at });
  }

  private listener?: (change: ThrottleChange) => void;
}
