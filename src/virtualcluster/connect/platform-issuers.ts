// The issuers a virtual cluster accepts on direct cluster endpoint tokens. The platform's signing keys (its JWKS,
// fetched over verified TLS from the address the virtual cluster connects to) prove that a token is the platform's;
// the iss claim names the platform's address when it signed (platformHost, or its own host:port), which an admin may
// change while virtual clusters stay connected by address. So the connection's own address and every address the
// platform announced (selves, each heartbeat) are accepted, old ones too while tokens signed under them may live;
// and a token the platform's key signed under an address not seen yet makes the virtual cluster ask the platform
// (one heartbeat cycle, at most every 10 s) before it is refused.

/** Addresses remembered at most: a platform does not change its address often. */
const MAX_ISSUERS = 16;
const ASK_INTERVAL_MS = 10_000;

/** The iss a platform at `host` (host:port, with or without scheme) signs with. */
export function issuerOf(host: string): string {
  return `https://${host.replace(/^https?:\/\//, "").replace(/\/+$/, "")}`;
}

export class PlatformIssuers {
  readonly #known = new Set<string>();
  readonly #ask: () => Promise<void>;
  readonly #now: () => number;
  #askedAt = Number.NEGATIVE_INFINITY;

  /** `ask`: one connection cycle, which learns the address the platform announces now. */
  constructor(ask: () => Promise<void>, now: () => number = Date.now) {
    this.#ask = ask;
    this.#now = now;
  }

  /** Learns the address connected to and the one the platform announces (selves' platformHost). */
  learn(connectionHost: string, announcedHost: string | undefined): void {
    for (const host of [connectionHost, announcedHost]) {
      if (!host) continue;
      const issuer = issuerOf(host);
      this.#known.delete(issuer); // newest last: the oldest goes first past the bound
      this.#known.add(issuer);
    }
    while (this.#known.size > MAX_ISSUERS) this.#known.delete(this.#known.values().next().value as string);
  }

  list(): string[] {
    return [...this.#known];
  }

  /** Runs `verify`; when it refuses the token's issuer alone, asks the platform once and runs it again. */
  async verify<T>(verify: () => Promise<T>): Promise<T> {
    try {
      return await verify();
    } catch (error) {
      if ((error as { reason?: unknown }).reason !== "unknown-issuer") throw error;
      if (this.#now() - this.#askedAt < ASK_INTERVAL_MS) throw error;
      this.#askedAt = this.#now();
      await this.#ask();
      return verify();
    }
  }
}
