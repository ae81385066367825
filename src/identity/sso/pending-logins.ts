// Logins between their start and their callback, by state: one-time (take() removes), expiring after ten minutes,
// and bounded so a flood of started logins cannot grow memory without limit (the oldest are dropped).
// Kept in the replica's memory: the login and its callback must reach the same platform process.

import type { ConnectorState } from "./types.ts";

export const PENDING_TTL_MS = 10 * 60 * 1000;
const MAX_PENDING = 10_000;

export interface PendingLogin {
  connectorId: string;
  /** What the connector keeps (PKCE verifier, nonce, SAML request id). */
  connector: ConnectorState;
  /** Digest of the browser-binding cookie the start set (login CSRF). */
  browserDigest: string;
  /** A relative path of this platform to end on. */
  returnPath?: string;
  /** CLI login: the loopback address the key is delivered to, and the CLI's own one-time state. */
  cli?: { redirect: string; state: string };
  createdMs: number;
}

export class PendingLogins {
  private readonly entries = new Map<string, PendingLogin>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  put(state: string, login: PendingLogin): void {
    this.prune();
    while (this.entries.size >= MAX_PENDING) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    this.entries.set(state, login);
  }

  /** The login of this state, once; undefined when unknown or expired. */
  take(state: string): PendingLogin | undefined {
    const login = this.entries.get(state);
    if (!login) return undefined;
    this.entries.delete(state);
    return this.now() - login.createdMs > PENDING_TTL_MS ? undefined : login;
  }

  get size(): number {
    return this.entries.size;
  }

  private prune(): void {
    const limit = this.now() - PENDING_TTL_MS;
    for (const [state, login] of this.entries) {
      if (login.createdMs >= limit) break; // insertion order is creation order
      this.entries.delete(state);
    }
  }
}
