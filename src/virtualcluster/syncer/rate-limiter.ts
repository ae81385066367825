// The rate limiting of client-go's default controller queue: the larger of a per-key exponential backoff and an
// overall token bucket, applied to retries (first-time adds are not limited).

/** Milliseconds since some fixed point; injectable so tests need no real time. */
export type Now = () => number;

export interface RateLimiter {
  /** Delay in milliseconds before `key` may be retried; counts one more failure of it. */
  when(key: string): number;
  /** The key succeeded: its failures are forgotten. */
  forget(key: string): void;
  /** Failures counted for `key` since it last succeeded. */
  failures(key: string): number;
}

/** base * 2^failures, capped at max (client-go: 5 ms to 1000 s). */
export function exponentialBackoff(baseMs = 5, maxMs = 1_000_000): RateLimiter {
  const counts = new Map<string, number>();
  return {
    when(key) {
      const failures = counts.get(key) ?? 0;
      counts.set(key, failures + 1);
      // 2^failures overflows to Infinity long after the cap; Math.min handles it.
      return Math.min(baseMs * 2 ** failures, maxMs);
    },
    forget: (key) => void counts.delete(key),
    failures: (key) => counts.get(key) ?? 0,
  };
}

/**
 * A token bucket of `burst` tokens refilled at `perSecond` (client-go: 10/s, burst 100). Every retry takes a
 * token; without one it waits for its turn, so a storm of failures is spread out overall.
 */
export function tokenBucket(perSecond = 10, burst = 100, now: Now = performance.now.bind(performance)): RateLimiter {
  let tokens = burst;
  let last = now();
  return {
    when() {
      const time = now();
      tokens = Math.min(burst, tokens + ((time - last) / 1000) * perSecond);
      last = time;
      tokens -= 1;
      return tokens >= 0 ? 0 : (-tokens / perSecond) * 1000;
    },
    forget() {},
    failures: () => 0,
  };
}

/** The largest delay of several limiters. */
export function maxOf(...limiters: RateLimiter[]): RateLimiter {
  return {
    when: (key) => Math.max(...limiters.map((limiter) => limiter.when(key))),
    forget(key) {
      for (const limiter of limiters) limiter.forget(key);
    },
    failures: (key) => Math.max(...limiters.map((limiter) => limiter.failures(key))),
  };
}

/** client-go's DefaultControllerRateLimiter. */
export function defaultRateLimiter(now?: Now): RateLimiter {
  return maxOf(exponentialBackoff(), tokenBucket(10, 100, now));
}
