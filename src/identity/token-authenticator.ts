// Authenticates `Authorization: Bearer <direct cluster endpoint token>` at the platform itself. A bearer token is
// ours when it is a JWS whose header names one of our algorithms and a kid, and whose audience is TOKEN_AUDIENCE;
// anything else is left to the access key authenticator. The signature is checked against the ring's published keys,
// then the claims against the auth index now: the user or team must still exist with the same uid, a user must not
// be disabled and its tokenGeneration must be the one signed; the platform's maximum access key lifetime applies too.
// The caller gets a Principal with a synthetic key entry (type DirectClusterEndpointToken) whose scope is the token's
// and which never mints credentials (access keys, tokens, kubeconfigs, passwords): a token cannot outlive itself.
// Verified tokens are cached by digest until the directory changes, so a burst of requests verifies once.

import { hash } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, errors as jose, jwtVerify } from "jose";
import { errors, isStatusError } from "../apimachinery/errors.ts";
import { requestBearerToken } from "../auth/access-key-material.ts";
import type { SigningKeyRing } from "../auth/signing/key-ring.ts";
import type { AuthenticationRequest, Authenticator } from "../auth/types.ts";
import type { UserInfo } from "../registry/types.ts";
import { ACCESS_KEY_TYPE_EXTRA } from "./access-key-authenticator.ts";
import type { AuthIndex, KeyEntry } from "./auth-index.ts";
import { callerOf } from "./caller-of.ts";
import type { KeyLimits } from "./key-validity.ts";
import { type FactsLookup, mintedBy } from "./resource-facts.ts";
import { compileScope, type ScopeMatcher } from "./scope.ts";
import { looksLikeJwt, privateClaims, TOKEN_ALGORITHMS, TOKEN_AUDIENCE, TOKEN_KEY_TYPE } from "./token-claims.ts";

export const TOKEN_ID_EXTRA = "management.platform.sh/token-id";
const MAX_TOKEN_LENGTH = 16 * 1024;
const MAX_CACHE_ENTRIES = 10_000;

export const TOKEN_EXPIRED = "token expired. Please request a new one";
export const TOKEN_REVOKED = "token was revoked (the user's tokens were invalidated). Please request a new one";

export interface TokenAuthenticatorOptions {
  ring: SigningKeyRing;
  index: AuthIndex;
  fresh: () => Promise<void>;
  limits: () => KeyLimits;
  /** The authorization facts of the served resources (which requests mint a credential). */
  facts: FactsLookup;
  now?: () => number;
}

interface Verified {
  user: UserInfo;
  iatMs: number;
  expMs: number;
  directoryVersion: number;
}

/** A token's caller never mints a credential (the resources declare which requests do). */
function tokenScope(compiled: ScopeMatcher | undefined, facts: FactsLookup): ScopeMatcher {
  return (request, prefix) => !mintedBy(facts, request) && (compiled ? compiled(request, prefix) : true);
}

export class TokenAuthenticator implements Authenticator {
  readonly #options: TokenAuthenticatorOptions;
  readonly #now: () => number;
  readonly #cache = new Map<string, Verified>();

  constructor(options: TokenAuthenticatorOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  authenticate(request: AuthenticationRequest): Promise<UserInfo> | undefined {
    const token = requestBearerToken(request);
    if (!token || token.length > MAX_TOKEN_LENGTH || !looksLikeJwt(token)) return undefined;
    // A token verified before is ours: skip decoding it again.
    const digest = hash("sha256", token, "base64url");
    if (!this.#cache.has(digest) && !this.recognizes(token)) return undefined;
    return this.#authenticate(token, digest);
  }

  /** Whether the bearer token is one of our tokens by its form (not yet whether it is valid). */
  recognizes(token: string): boolean {
    if (token.length > MAX_TOKEN_LENGTH || !looksLikeJwt(token)) return false;
    try {
      const header = decodeProtectedHeader(token);
      if (typeof header.kid !== "string" || !TOKEN_ALGORITHMS.includes(header.alg as never)) return false;
      const { aud } = decodeJwt(token);
      return aud === TOKEN_AUDIENCE || (Array.isArray(aud) && aud.includes(TOKEN_AUDIENCE));
    } catch {
      return false;
    }
  }

  /** The caller of a token; throws the 401 that says why not (never quoting the token). */
  authenticateToken(token: string): Promise<UserInfo> {
    return this.#authenticate(token, hash("sha256", token, "base64url"));
  }

  async #authenticate(token: string, digest: string): Promise<UserInfo> {
    const now = this.#now();
    await this.#options.fresh();
    const { index } = this.#options;
    const cached = this.#cache.get(digest);
    if (cached && cached.directoryVersion === index.directoryVersion) {
      this.#checkTimes(cached.iatMs, cached.expMs, now);
      return cached.user;
    }
    const verified = await this.#verify(token, now);
    this.#remember(digest, verified);
    return verified.user;
  }

  #checkTimes(iatMs: number, expMs: number, now: number): void {
    if (now >= expMs) throw errors.unauthorized(TOKEN_EXPIRED);
    const max = this.#options.limits().accessKeyMaxTTLSeconds;
    if (max > 0 && now >= iatMs + max * 1000) {
      throw errors.unauthorized("token expired: it is older than the maximum access key lifetime");
    }
  }

  #remember(digest: string, verified: Verified): void {
    if (this.#cache.size >= MAX_CACHE_ENTRIES) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(digest, verified);
  }

  async #verify(token: string, now: number): Promise<Verified> {
    const { ring, index } = this.#options;
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(
        token,
        async (header) => {
          const key = typeof header.kid === "string" ? await ring.resolveVerificationKey(header.kid) : undefined;
          if (!key || key.alg !== header.alg) {
            throw errors.unauthorized("token was signed by an unknown or retired signing key");
          }
          return key.publicKey;
        },
        { audience: TOKEN_AUDIENCE, algorithms: [...TOKEN_ALGORITHMS], currentDate: new Date(now) },
      ));
    } catch (error) {
      throw toUnauthorized(error);
    }
    const claims = privateClaims(payload);
    if (!claims) throw errors.unauthorized("invalid token: it lacks the platform's claims");
    const iatMs = claims.iat * 1000;
    const expMs = claims.exp * 1000;
    this.#checkTimes(iatMs, expMs, now);
    const directoryVersion = index.directoryVersion;
    const key: KeyEntry = {
      name: "",
      uid: claims.jti,
      digest: "",
      groups: [],
      type: TOKEN_KEY_TYPE,
      disabled: false,
      ttlSeconds: claims.exp - claims.iat,
      ttlAfterLastActivity: false,
      createdMs: iatMs,
      scope: claims.scope,
      ownerUid: claims.uid,
      tokenGeneration: claims.gen,
      sessionGeneration: 0,
      deleting: false,
    };
    const scope = tokenScope(compileScope(claims.scope), this.#options.facts);
    const extra = { [ACCESS_KEY_TYPE_EXTRA]: [TOKEN_KEY_TYPE], [TOKEN_ID_EXTRA]: [claims.jti] };
    if (claims.kind === "User") {
      const user = index.user(claims.name);
      if (!user || user.uid !== claims.uid) throw errors.unauthorized("the user of this token no longer exists");
      if (user.disabled) throw errors.unauthorized("user is disabled");
      if (claims.gen !== user.tokenGeneration) throw errors.unauthorized(TOKEN_REVOKED);
      key.user = user.name;
      return { user: callerOf({ index, key, scope, user, extra }), iatMs, expMs, directoryVersion };
    }
    const team = index.team(claims.name);
    if (!team || team.uid !== claims.uid) throw errors.unauthorized("the team of this token no longer exists");
    key.team = team.name;
    return { user: callerOf({ index, key, scope, team, extra }), iatMs, expMs, directoryVersion };
  }
}

/** A 401 that says why, without the token. */
function toUnauthorized(error: unknown): unknown {
  if (isStatusError(error)) return error;
  if (error instanceof jose.JWTExpired) return errors.unauthorized(TOKEN_EXPIRED);
  if (error instanceof jose.JWSSignatureVerificationFailed) {
    return errors.unauthorized("invalid token: signature verification failed");
  }
  if (error instanceof jose.JWTClaimValidationFailed) return errors.unauthorized(`invalid token: ${error.message}`);
  if (error instanceof jose.JOSEAlgNotAllowed) return errors.unauthorized("invalid token: algorithm not allowed");
  return errors.unauthorized("invalid bearer token");
}
