// Authenticates platform users at the virtual cluster's API server:
//   - a direct cluster endpoint token (a JWT) is verified offline against the platform's JWKS (a forgery never
//     costs the platform a request), then reviewed by the platform as a key is, since only the platform knows
//     whether the user's tokenGeneration was raised or the user was disabled or deleted since; while the platform
//     cannot be reached the offline verdict stands — the direct endpoint keeps working without it, and a revoked
//     token then works until its own expiry;
//   - anything else is treated as a platform access key and reviewed by the platform (`selves` with spec.accessKey,
//     asked with our own `virtualcluster` key).
// The credential's scope must reach this virtual cluster. Users the platform lets reach it are its administrators
// (group system:masters), as project members are in the commercial product. Answers are cached briefly by digest
// (never by the credential itself) so a burst of kubectl calls costs one review: never past the credential's own
// expiry (a token's exp, a key's lifetime as the platform reports it), and for at most DEFAULT_CACHE_MS (4 s)
// otherwise, which bounds how long a key or token revoked on the platform (a raised tokenGeneration, a disabled or
// deleted user, a deleted key) keeps working here while the platform answers.

import { hash } from "node:crypto";
import { errors, isStatusError } from "../../apimachinery/errors.ts";
import type { AuthenticationRequest, Authenticator } from "../../auth/types.ts";
import type { UserInfo } from "../../registry/types.ts";
import type { AccessKeyScope, SelfStatus } from "./platform-api.ts";
import { scopeReachesVirtualCluster } from "./scope-access.ts";

export const ADMIN_GROUP = "system:masters";
/** The longest a reviewed credential is trusted without asking again: the bound for a revoked key to stop working. */
export const DEFAULT_CACHE_MS = 4_000;
const MAX_CACHE_ENTRIES = 10_000;

/** What an offline-verified token says about its holder. */
export interface VerifiedTokenHolder {
  name: string;
  uid?: string;
  kind?: string;
  scope?: AccessKeyScope;
  /** The token's exp, seconds since the epoch. */
  exp?: number;
}

export interface PlatformUserAuthenticatorOptions {
  /** The instance this virtual cluster is registered as; undefined while not connected. */
  target(): { project: string; name: string } | undefined;
  /** Token review through the platform; throws the platform's error (401/400 when the key is not valid). */
  review(credential: string): Promise<SelfStatus>;
  /** Offline verification of a direct cluster endpoint token; throws when it is not valid. */
  verifyToken?(token: string): Promise<VerifiedTokenHolder>;
  cacheMs?: number;
  now?: () => number;
}

interface CacheEntry {
  expires: number;
  user?: UserInfo;
  /** A definite "not a valid platform credential" (cached too, so a bad token cannot hammer the platform). */
  rejected?: string;
}

const looksLikeJwt = (token: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);

function bearer(request: AuthenticationRequest): string | undefined {
  const header = request.headers.authorization;
  const value = Array.isArray(header) ? header[0] : header;
  const match = value?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

export class PlatformUserAuthenticator implements Authenticator {
  readonly #options: PlatformUserAuthenticatorOptions;
  readonly #cache = new Map<string, CacheEntry>();

  constructor(options: PlatformUserAuthenticatorOptions) {
    this.#options = options;
  }

  async authenticate(request: AuthenticationRequest): Promise<UserInfo | undefined> {
    const token = bearer(request);
    if (!token) return undefined;
    const target = this.#options.target();
    if (!target) return undefined; // not connected: only local credentials work
    const now = (this.#options.now ?? Date.now)();
    const digest = hash("sha256", token, "base64url");
    const cached = this.#cache.get(digest);
    if (cached && cached.expires > now) return this.#answer(cached);
    const entry = await this.#resolve(token, target, now);
    if (entry) this.#remember(digest, entry);
    return entry ? this.#answer(entry) : undefined;
  }

  #answer(entry: CacheEntry): UserInfo | undefined {
    if (entry.rejected) throw errors.unauthorized(entry.rejected);
    return entry.user;
  }

  #remember(digest: string, entry: CacheEntry): void {
    if (this.#cache.size >= MAX_CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(digest, entry);
  }

  /** Undefined: not a platform credential (another authenticator may know it); not cached. */
  async #resolve(
    token: string,
    target: { project: string; name: string },
    now: number,
  ): Promise<CacheEntry | undefined> {
    const cacheUntil = now + (this.#options.cacheMs ?? DEFAULT_CACHE_MS);
    /** Trusted until the cache bound or the credential's own end, whichever comes first. */
    const until = (endMs: number | undefined) =>
      endMs === undefined || Number.isNaN(endMs) ? cacheUntil : Math.min(cacheUntil, endMs);
    const denied = (reason: string): CacheEntry => ({ expires: cacheUntil, rejected: reason });
    if (looksLikeJwt(token) && this.#options.verifyToken) {
      let holder: VerifiedTokenHolder;
      try {
        holder = await this.#options.verifyToken(token);
      } catch (error) {
        return denied(`invalid direct cluster endpoint token: ${error instanceof Error ? error.message : "rejected"}`);
      }
      if (!scopeReachesVirtualCluster(holder.scope, target)) return denied(outOfScope(target));
      const revoked = await this.#revocation(token);
      if (revoked) return denied(`the platform refused this direct cluster endpoint token: ${revoked}`);
      const exp = holder.exp === undefined ? undefined : holder.exp * 1000;
      return { expires: until(exp), user: userInfo(holder.name, holder.uid, [], "token") };
    }
    let self: SelfStatus;
    try {
      self = await this.#options.review(token);
    } catch (error) {
      const code = (error as { code?: number }).code;
      // 400/401: the platform does not know this key. Leave it to the local authenticators (the admin token).
      if (code === 400 || code === 401 || (isStatusError(error) && error.code === 401)) return undefined;
      throw errors.unauthorized("cannot verify the platform access key right now: the platform is unreachable");
    }
    if (!scopeReachesVirtualCluster(self.accessKeyScope, target)) return denied(outOfScope(target));
    const name = self.user?.username || self.user?.name || self.team?.username || self.team?.name || self.subject || "";
    if (!name) return undefined;
    const ends = self.accessKeyExpirationTimestamp ? Date.parse(self.accessKeyExpirationTimestamp) : undefined;
    return { expires: until(ends), user: userInfo(name, self.uid, self.groups ?? [], "access-key") };
  }

  /** Why the platform refuses a token that verified offline; undefined when it accepts it or cannot be asked. */
  async #revocation(token: string): Promise<string | undefined> {
    try {
      await this.#options.review(token);
      return undefined;
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code !== 400 && code !== 401) return undefined; // unreachable: the offline verdict stands
      return (error as Error).message || "revoked";
    }
  }
}

function outOfScope(target: { project: string; name: string }): string {
  return `the credential's scope does not include virtual cluster ${target.name} of project ${target.project}`;
}

function userInfo(name: string, uid: string | undefined, groups: string[], via: string): UserInfo {
  const all = new Set([...groups.filter((group) => !group.startsWith("system:")), ADMIN_GROUP, "system:authenticated"]);
  return { name, uid, groups: [...all], extra: { "virtualcluster.platform.sh/authenticated-by": [via] } };
}
