// The platform's signing keys, kept only in its KeyValueStore under /internal/signingkeys/<kid> (no resource serves
// /internal/, so the private keys are never readable through the API). Exactly one key is current and signs; a
// rotation adds a new current key and retires the old one, which stays published for verification until every token
// it can have signed has expired (retiredAt + the longest token lifetime + clock-skew grace), then it is deleted.
// Loaded at start; rotations are serialized. With `shared` (replicas on one etcd) the first key is made by one
// replica only (a one-time claim), and the ring re-reads the store every REFRESH_MS and whenever a token names a key
// it does not know, so a rotation on one replica reaches the others.

import { claimOneTimeJob, waitForOneTimeJob } from "../../storage/one-time-claim.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import {
  DEFAULT_SIGNING_ALGORITHM,
  generateSigningKey,
  loadSigningKey,
  type PublicJwk,
  type SigningAlgorithm,
  type SigningKey,
  type StoredSigningKey,
} from "./signing-key.ts";

export const SIGNING_KEYS_PREFIX = "/internal/signingkeys/";
/** Verifiers may run with a slightly wrong clock: keep retired keys this much longer. */
export const CLOCK_SKEW_GRACE_MS = 5 * 60 * 1000;
/** How often a shared ring re-reads the store, and the least time between two reads for an unknown key id. */
const REFRESH_MS = 30_000;
const UNKNOWN_KID_REFRESH_MS = 1_000;
const FIRST_KEY_CLAIM = "/internal/signingkeys-first";

export interface SigningKeyRingOptions {
  storage: KeyValueStore;
  /** The longest lifetime any token can have, in seconds: how long a retired key stays published. */
  maxTokenTTLSeconds: number;
  /** Algorithm of the first key (default ES256). */
  algorithm?: SigningAlgorithm;
  now?: () => number;
  onError?: (error: unknown) => void;
  /** Other processes share the store and may rotate (etcd replicas). */
  shared?: boolean;
}

export interface RotationResult {
  keyID: string;
  algorithm: SigningAlgorithm;
  /** Every key id in the JWKS after the rotation, the new one first. */
  publishedKeyIDs: string[];
}

/** Current key first, then the most recently retired. */
const rank = (key: SigningKey, current: SigningKey | undefined) =>
  key === current ? Number.POSITIVE_INFINITY : (key.stored.retiredAt ?? key.stored.createdAt);

interface Entry {
  key: SigningKey;
  revision: number;
}

export class SigningKeyRing {
  readonly #options: SigningKeyRingOptions;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  #current?: SigningKey;
  /** Serializes rotations and pruning (each reads, then writes, the stored records). */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(options: SigningKeyRingOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Loads the stored keys; on the first start of a data directory creates the first one. */
  static async open(options: SigningKeyRingOptions): Promise<SigningKeyRing> {
    const ring = new SigningKeyRing(options);
    await ring.#load();
    if (options.shared) {
      ring.#refreshTimer = setInterval(() => {
        ring.refresh().catch((error) => options.onError?.(error));
      }, REFRESH_MS);
      ring.#refreshTimer.unref();
    }
    return ring;
  }

  #refreshTimer?: NodeJS.Timeout;
  #lastRefresh = 0;

  close(): void {
    if (this.#refreshTimer) clearInterval(this.#refreshTimer);
  }

  /** verificationKey(), re-reading a shared store first when the id is unknown (another replica rotated). */
  async resolveVerificationKey(kid: string): Promise<SigningKey | undefined> {
    const known = this.verificationKey(kid);
    if (known || !this.#options.shared || Date.now() - this.#lastRefresh < UNKNOWN_KID_REFRESH_MS) return known;
    await this.refresh();
    return this.verificationKey(kid);
  }

  /** Re-reads the stored keys (another replica may have rotated); the newest live key signs. */
  refresh(): Promise<void> {
    return this.#serialized(async () => {
      this.#lastRefresh = Date.now();
      const { records } = await this.#options.storage.list({ prefix: SIGNING_KEYS_PREFIX });
      const seen = new Set<string>();
      for (const record of records) {
        const stored = JSON.parse(record.value) as StoredSigningKey;
        seen.add(stored.kid);
        const entry = this.#entries.get(stored.kid);
        if (entry?.revision === record.revision) continue;
        this.#entries.set(stored.kid, { key: loadSigningKey(stored), revision: record.revision });
      }
      for (const kid of [...this.#entries.keys()]) if (!seen.has(kid)) this.#entries.delete(kid);
      const live = [...this.#entries.values()]
        .map((entry) => entry.key)
        .filter((key) => key.stored.retiredAt === undefined)
        .sort((a, b) => a.stored.createdAt - b.stored.createdAt);
      const newest = live.pop();
      if (newest) this.#current = newest;
    });
  }

  /** The key that signs new tokens. */
  current(): SigningKey {
    if (!this.#current) throw new Error("the signing key ring is not loaded");
    return this.#current;
  }

  /** A published key by id: the current one or a retired one whose tokens may still be valid. */
  verificationKey(kid: string): SigningKey | undefined {
    const entry = this.#entries.get(kid);
    return entry && this.#isPublished(entry.key.stored, this.#now()) ? entry.key : undefined;
  }

  /** Published keys, the current first, then the newest retired ones. */
  published(): SigningKey[] {
    const now = this.#now();
    const keys = [...this.#entries.values()]
      .map((entry) => entry.key)
      .filter((key) => this.#isPublished(key.stored, now))
      .sort((a, b) => rank(b, this.#current) - rank(a, this.#current));
    if (keys.length < this.#entries.size) this.#schedulePrune();
    return keys;
  }

  /** The JWKS document: public keys only. */
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.published().map((key) => key.publicJwk) };
  }

  /** Adds a new current key and retires the previous one (still published until its tokens expire). */
  rotate(algorithm: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM): Promise<RotationResult> {
    return this.#serialized(async () => {
      const previous = this.#current;
      const next = await generateSigningKey(algorithm, this.#now());
      await this.#add(next);
      if (previous) await this.#retire(previous.kid, next.createdAt);
      await this.#prune();
      return { keyID: next.kid, algorithm, publishedKeyIDs: this.published().map((key) => key.kid) };
    });
  }

  #isPublished(stored: StoredSigningKey, now: number): boolean {
    return stored.publishUntil === undefined || stored.publishUntil > now;
  }

  #serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #load(): Promise<void> {
    const { records } = await this.#options.storage.list({ prefix: SIGNING_KEYS_PREFIX });
    for (const record of records) {
      const stored = JSON.parse(record.value) as StoredSigningKey;
      this.#entries.set(stored.kid, { key: loadSigningKey(stored), revision: record.revision });
    }
    const live = [...this.#entries.values()]
      .map((entry) => entry.key)
      .filter((key) => key.stored.retiredAt === undefined)
      .sort((a, b) => a.stored.createdAt - b.stored.createdAt);
    const newest = live.pop();
    if (
      !newest &&
      this.#options.shared &&
      !(await claimOneTimeJob({ storage: this.#options.storage, key: FIRST_KEY_CLAIM }))
    ) {
      // Another replica makes the first key: wait for it.
      await waitForOneTimeJob("the first signing key", async () => {
        const { records } = await this.#options.storage.list({ prefix: SIGNING_KEYS_PREFIX });
        return records.length > 0 ? records : undefined;
      });
      await this.refresh();
    } else if (!newest) {
      await this.#add(await generateSigningKey(this.#options.algorithm ?? DEFAULT_SIGNING_ALGORITHM, this.#now()));
    } else {
      this.#current = newest;
      // More than one live key: a rotation stopped between its two writes. The newest one won.
      for (const key of live) await this.#retire(key.kid, newest.stored.createdAt);
    }
    await this.#prune();
  }

  async #add(stored: StoredSigningKey): Promise<void> {
    const record = await this.#options.storage.create(SIGNING_KEYS_PREFIX + stored.kid, JSON.stringify(stored));
    const key = loadSigningKey(stored);
    this.#entries.set(stored.kid, { key, revision: record.revision });
    this.#current = key;
  }

  async #retire(kid: string, retiredAt: number): Promise<void> {
    const entry = this.#entries.get(kid);
    if (!entry) return;
    const publishUntil = retiredAt + this.#options.maxTokenTTLSeconds * 1000 + CLOCK_SKEW_GRACE_MS;
    const stored: StoredSigningKey = { ...entry.key.stored, retiredAt, publishUntil };
    const record = await this.#options.storage.update(
      SIGNING_KEYS_PREFIX + kid,
      JSON.stringify(stored),
      entry.revision,
    );
    this.#entries.set(kid, { key: loadSigningKey(stored), revision: record.revision });
  }

  /** Deletes retired keys no valid token can name any more. */
  async #prune(): Promise<void> {
    const now = this.#now();
    for (const [kid, entry] of this.#entries) {
      if (this.#isPublished(entry.key.stored, now)) continue;
      await this.#options.storage.delete(SIGNING_KEYS_PREFIX + kid, entry.revision);
      this.#entries.delete(kid);
    }
  }

  #pruning = false;

  #schedulePrune(): void {
    if (this.#pruning) return;
    this.#pruning = true;
    this.#serialized(() => this.#prune())
      .catch((error) => this.#options.onError?.(error))
      .finally(() => {
        this.#pruning = false;
      });
  }
}
