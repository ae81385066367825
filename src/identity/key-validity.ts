// Why a stored access key does not authenticate now, as the 401 message says it; undefined when it does.

import type { KeyLimits } from "../apis/management/v1/ownedaccesskey-lifetime.ts";
import type { AuthIndex, KeyEntry, UserEntry } from "./auth-index.ts";

export { type KeyLimits, keyExpiresAt } from "../apis/management/v1/ownedaccesskey-lifetime.ts";

export const KEY_NOT_FOUND = "Access key not found. Please login again";
/** The type of the keys that are the OpenID provider's refresh tokens (oidc-provider/refresh-token-keys.ts). */
export const REFRESH_TOKEN_KEY_TYPE = "OIDCRefreshToken";
export const NOT_AN_API_KEY = "this is an application's OpenID refresh token, not an access key of the platform's API";
export const KEY_EXPIRED = "access key expired. Please login again";
export const KEY_REVOKED =
  "access key was revoked (the user's tokens were invalidated: its tokenGeneration was raised). Please login again";
export const SESSION_ENDED =
  "access key was revoked (the user's sessions were ended by disabling the user or changing the password). Please login again";
/** The keys that are sessions: a password or SSO login, an application's OpenID refresh token. */
const SESSION_KEY_TYPES: ReadonlySet<string> = new Set(["Login", REFRESH_TOKEN_KEY_TYPE]);

/** Why a key of `user` was revoked by one of the user's generations; undefined when it was not. */
export function revokedBy(key: KeyEntry, user: UserEntry): string | undefined {
  if (key.tokenGeneration < user.tokenGeneration) return KEY_REVOKED;
  if (SESSION_KEY_TYPES.has(key.type) && key.sessionGeneration < user.sessionGeneration) return SESSION_ENDED;
  return undefined;
}

const passed = (fromMs: number, seconds: number, nowMs: number) => seconds > 0 && nowMs >= fromMs + seconds * 1000;

/** `lastSeenMs`: the last use this process saw (more recent than status.lastActivity, written once a minute). */
export function keyProblem(
  key: KeyEntry,
  index: AuthIndex,
  nowMs: number,
  limits: KeyLimits,
  lastSeenMs = 0,
): string | undefined {
  if (key.deleting) return KEY_NOT_FOUND;
  if (key.disabled) return "access key is disabled";
  const ttlFrom = key.ttlAfterLastActivity
    ? Math.max(key.createdMs, key.lastActivityMs ?? 0, lastSeenMs)
    : key.createdMs;
  if (passed(ttlFrom, key.ttlSeconds, nowMs)) return KEY_EXPIRED;
  if (passed(key.createdMs, limits.accessKeyMaxTTLSeconds, nowMs)) {
    return "access key expired: it is older than the maximum access key lifetime. Please login again";
  }
  if (key.type === "Login" && passed(key.createdMs, limits.loginAccessKeyTTLSeconds, nowMs)) return KEY_EXPIRED;
  if (key.user) {
    const user = index.user(key.user);
    if (!user || (key.ownerUid && user.uid !== key.ownerUid)) return "the user of this access key no longer exists";
    if (user.disabled) return "user is disabled";
    const revoked = revokedBy(key, user);
    if (revoked) return revoked;
  } else if (key.team) {
    const team = index.team(key.team);
    if (!team || (key.ownerUid && team.uid !== key.ownerUid)) return "the team of this access key no longer exists";
  }
  return undefined;
}
