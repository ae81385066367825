// How often one cluster's tunnel may open on this replica: a token bucket per cluster. Each open costs the platform
// a heartbeat, a status write and a look at the cluster's workloads and apps, so an agent reconnecting in a loop (a
// bug, or a Cluster owner's own agent used as a lever) is told to wait (429 with Retry-After) instead. Only opens
// that passed authorization are counted, so no one but the holder of a cluster's agent key can use up its tokens.
// A healthy agent reconnects with a doubling backoff from half a second, far below the default rate.

export interface TunnelOpenLimitOptions {
  /** Opens allowed at once (default 10). */
  burst?: number;
  /** One more open allowed every refillMs (default 3 s). */
  refillMs?: number;
  now?: () => number;
}

/** Buckets kept before full ones are dropped (a full bucket is the same as none). */
const PRUNE_AT = 10_000;

export class TunnelOpenLimit {
  readonly #burst: number;
  readonly #refillMs: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(options: TunnelOpenLimitOptions = {}) {
    this.#burst = options.burst ?? 10;
    this.#refillMs = options.refillMs ?? 3000;
    this.#now = options.now ?? (() => performance.now());
  }

  /** 0 when `cluster` may open its tunnel now (the open is counted); else the whole seconds to wait. */
  take(cluster: string): number {
    const now = this.#now();
    const bucket = this.#buckets.get(cluster) ?? { tokens: this.#burst, at: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) / this.#refillMs);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.#buckets.set(cluster, bucket);
      return Math.max(1, Math.ceil(((1 - bucket.tokens) * this.#refillMs) / 1000));
    }
    bucket.tokens -= 1;
    if (this.#buckets.size >= PRUNE_AT) this.#prune(now);
    this.#buckets.set(cluster, bucket);
    return 0;
  }

  #prune(now: number): void {
    for (const [cluster, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.at) / this.#refillMs >= this.#burst) this.#buckets.delete(cluster);
    }
  }
}
