// Logins between their start and their callback, by state, kept in the platform's store so the callback may reach
// any replica (and survives a restart): /internal/sso/pending/<sha256 of the state>, encrypted at rest (what a login
// keeps is secret: the PKCE verifier, the nonce, the CLI's state). One-time (take() removes it, a compare-and-swap,
// so of two replicas only one finishes a login), expiring after ten minutes (expired ones read as absent; the
// leader's sweeper deletes them). Each replica also bounds the logins it started within those ten minutes: past
// the cap the oldest is dropped, so a flood of started logins cannot grow the store without limit.

import { ExpiringRecords } from "../../storage/expiring-records.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import type { ConnectorState } from "./types.ts";

export const SSO_STATE_PREFIX = "/internal/sso/";
export const PENDING_LOGINS_PREFIX = `${SSO_STATE_PREFIX}pending/`;
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

export interface PendingLoginsOptions {
  storage: KeyValueStore;
  now?: () => number;
  /** Logins one replica keeps within the ten minutes (default 10,000). */
  maxPending?: number;
}

export class PendingLogins {
  readonly #records: ExpiringRecords<PendingLogin>;
  readonly #now: () => number;
  readonly #max: number;
  /** This replica's recent starts, oldest first: state -> created. Bounds what one replica adds to the store. */
  readonly #started = new Map<string, number>();

  constructor(options: PendingLoginsOptions) {
    this.#now = options.now ?? Date.now;
    this.#max = options.maxPending ?? MAX_PENDING;
    this.#records = new ExpiringRecords({ storage: options.storage, prefix: PENDING_LOGINS_PREFIX, now: this.#now });
  }

  async put(state: string, login: PendingLogin): Promise<void> {
    const limit = this.#now() - PENDING_TTL_MS;
    for (const [started, createdMs] of this.#started) {
      if (createdMs >= limit && this.#started.size < this.#max) break;
      this.#started.delete(started);
      // Past the cap the oldest login this replica started is dropped (an expired one is the sweeper's).
      if (createdMs >= limit) await this.#records.delete(started);
    }
    await this.#records.put(state, login, login.createdMs + PENDING_TTL_MS);
    this.#started.set(state, login.createdMs);
  }

  /** The login of this state, once, on whichever replica asks first; undefined when unknown or expired. */
  take(state: string): Promise<PendingLogin | undefined> {
    this.#started.delete(state);
    return this.#records.take(state);
  }

  /** Logins this replica started in the last ten minutes (and may not have been finished). */
  get startedHere(): number {
    return this.#started.size;
  }
}
