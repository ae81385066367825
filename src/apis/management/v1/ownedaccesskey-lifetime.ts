// When an access key stops working by its lifetime alone: its ttl (from creation, or from its last activity), the
// platform's maximum key age, the Login key lifetime. Authentication refuses a key past it (identity/key-validity.ts)
// and reads show it as status.expirationTimestamp, so kubectl and the console tell the truth about Login keys too.

export interface KeyLimits {
  /** Global maximum life of any key, seconds from creation; 0 = none. */
  accessKeyMaxTTLSeconds: number;
  /** Life of Login keys, seconds from creation; 0 = none. */
  loginAccessKeyTTLSeconds: number;
}

export interface KeyLifetime {
  type: string;
  /** Seconds; 0 = none. */
  ttlSeconds: number;
  ttlAfterLastActivity: boolean;
  createdMs: number;
  lastActivityMs?: number;
}

/** 9999-12-31T23:59:59Z, the last time RFC 3339 writes: a lifetime ending later has no date, so it never ends. */
const LAST_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/**
 * The end of the key's lifetime (ms), or undefined when nothing limits it; disabling, deleting or revoking ends it
 * sooner. An end past the year 9999 (a ttl of up to 2^53 seconds is valid) counts as none: no timestamp can say it.
 * `lastSeenMs`: a use more recent than status.lastActivity (written at most once a minute).
 */
export function keyExpiresAt(key: KeyLifetime, limits: KeyLimits, lastSeenMs = 0): number | undefined {
  const ends: number[] = [];
  const ttlFrom = key.ttlAfterLastActivity
    ? Math.max(key.createdMs, key.lastActivityMs ?? 0, lastSeenMs)
    : key.createdMs;
  if (key.ttlSeconds > 0) ends.push(ttlFrom + key.ttlSeconds * 1000);
  if (limits.accessKeyMaxTTLSeconds > 0) ends.push(key.createdMs + limits.accessKeyMaxTTLSeconds * 1000);
  if (key.type === "Login" && limits.loginAccessKeyTTLSeconds > 0) {
    ends.push(key.createdMs + limits.loginAccessKeyTTLSeconds * 1000);
  }
  const dated = ends.filter((end) => end <= LAST_DATE_MS);
  return dated.length ? Math.min(...dated) : undefined;
}
