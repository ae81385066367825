// Offline verification of direct cluster endpoint tokens, for the virtual cluster runtime (a separate process): it
// imports nothing of the platform at run time (only jose, node and the dependency-free token-claims.ts).
// The platform's JWKS is fetched once and cached; verification needs no network after that. The cache is refreshed
// in the background every refreshIntervalMs (while it refreshes, and when the platform is unreachable, the cached keys
// keep working), and refetched at once when a token names an unknown kid (a rotation), at most once per
// minRefetchIntervalMs so a stream of forged kids cannot hammer the platform.
// What offline verification cannot know: a tokenGeneration bump or a disabled user takes effect at the platform at
// once, here only when the token expires; the virtual cluster runtime therefore also asks the platform through
// `selves` while it answers (src/virtualcluster/connect/platform-user-authenticator.ts: within 4 s).

import { request as httpsRequest } from "node:https";
import { decodeProtectedHeader, importJWK, type JWK, jwtVerify, type KeyInput } from "jose";
import { looksLikeJwt, privateClaims, TOKEN_ALGORITHMS, TOKEN_AUDIENCE, type TokenClaims } from "./token-claims.ts";

// Not `import ... from "node:http"`, which loads Node's fetch implementation (see src/utils/node-http.ts, not
// imported here: this file imports nothing of the platform).
const http = process.getBuiltinModule("node:http");

export interface TokenVerifierOptions {
  /** Where the platform publishes its JWKS, e.g. https://platform.example/.well-known/jwks.json. */
  jwksUrl?: string;
  /** Instead of jwksUrl: how to get the JWKS document (tests, custom transports). */
  fetchJwks?: () => Promise<unknown>;
  /** The platform's base URL, as the iss claim carries it. Default: jwksUrl without "/.well-known/jwks.json". */
  issuer?: string;
  /**
   * Every issuer accepted, read at each verification; default: `issuer` alone. The key is what proves a token is the
   * platform's; its issuer follows the platform's address (platformHost), so a platform whose address changed signs
   * with the new one while tokens it signed before carry the old.
   */
  issuers?: () => readonly string[];
  /** Default: the platform's direct cluster endpoint audience. */
  audience?: string;
  /** PEM of the CA that signed the platform's serving certificate (https jwksUrl). */
  ca?: string | Buffer;
  /** Skip verifying the platform's serving certificate when fetching the JWKS (the platform connection's setting). */
  insecure?: boolean;
  /** Background refresh of the key set; default 5 minutes. */
  refreshIntervalMs?: number;
  /** Least time between two fetches caused by unknown key ids; default 10 seconds. */
  minRefetchIntervalMs?: number;
  /** Accepted clock difference for exp, seconds; default 0. */
  clockToleranceSeconds?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
}

export interface VerifiedToken {
  name: string;
  uid: string;
  kind: "User" | "Team";
  gen: number;
  scope?: TokenClaims["scope"];
  /** The user's teams when the token was issued. */
  teams?: string[];
  sub: string;
  jti: string;
  iat: number;
  exp: number;
}

export interface TokenVerifier {
  /** The token's claims; throws TokenVerificationError when it is not a valid token of this platform. */
  verify(token: string): Promise<VerifiedToken>;
  /** Fetches the key set now (for example at start, so the first request needs no fetch). */
  refresh(): Promise<void>;
}

export type TokenVerificationReason =
  | "malformed"
  | "unknown-key"
  | "jwks-unavailable"
  | "expired"
  /** Signed by the platform's key, but naming an issuer not (yet) accepted. */
  | "unknown-issuer"
  | "invalid";

/** Why a token was refused. The message never contains the token. */
export class TokenVerificationError extends Error {
  readonly reason: TokenVerificationReason;

  constructor(reason: TokenVerificationReason, message: string) {
    super(message);
    this.name = "TokenVerificationError";
    this.reason = reason;
  }
}

const DEFAULT_REFRESH_MS = 5 * 60 * 1000;
const DEFAULT_REFETCH_MS = 10 * 1000;
const FETCH_TIMEOUT_MS = 10 * 1000;
const MAX_JWKS_BYTES = 1024 * 1024;

type VerificationKey = { alg: string; key: KeyInput };

const JWKS_PATH = "/.well-known/jwks.json";

function getJson(url: string, ca: string | Buffer | undefined, insecure: boolean): Promise<unknown> {
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : http.request;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      { method: "GET", headers: { accept: "application/json" }, ca, rejectUnauthorized: !insecure },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_JWKS_BYTES) req.destroy(new Error("JWKS document too large"));
          else chunks.push(chunk);
        });
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`JWKS request answered ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          } catch {
            reject(new Error("JWKS document is not JSON"));
          }
        });
        res.on("error", reject);
      },
    );
    req.setTimeout(FETCH_TIMEOUT_MS, () => req.destroy(new Error("JWKS request timed out")));
    req.on("error", reject);
    req.end();
  });
}

async function importKeys(document: unknown): Promise<Map<string, VerificationKey>> {
  const keys = new Map<string, VerificationKey>();
  const list = (document as { keys?: unknown })?.keys;
  if (!Array.isArray(list)) throw new Error("JWKS document has no keys");
  for (const jwk of list as JWK[]) {
    if (typeof jwk?.kid !== "string" || !TOKEN_ALGORITHMS.includes(jwk.alg as never)) continue;
    if (jwk.use !== undefined && jwk.use !== "sig") continue;
    try {
      keys.set(jwk.kid, { alg: jwk.alg as string, key: await importJWK(jwk, jwk.alg) });
    } catch {
      // A key this runtime cannot use is skipped; tokens naming it fail as unknown-key.
    }
  }
  return keys;
}

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const { jwksUrl } = options;
  const fetchJwks =
    options.fetchJwks ?? (jwksUrl ? () => getJson(jwksUrl, options.ca, options.insecure === true) : undefined);
  if (!fetchJwks) throw new Error("createTokenVerifier needs jwksUrl or fetchJwks");
  const issuer = options.issuer ?? (jwksUrl?.endsWith(JWKS_PATH) ? jwksUrl.slice(0, -JWKS_PATH.length) : undefined);
  if (!issuer && !options.issuers) throw new Error("createTokenVerifier needs the platform's issuer URL");
  const issuers = options.issuers ?? (() => [issuer as string]);
  const audience = options.audience ?? TOKEN_AUDIENCE;
  const refreshMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_MS;
  const refetchMs = options.minRefetchIntervalMs ?? DEFAULT_REFETCH_MS;
  const now = options.now ?? Date.now;
  let keys: Map<string, VerificationKey> | undefined;
  let fetchedAt = 0;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;

  /** One fetch at a time; callers share it. A failure keeps the keys already cached. */
  const load = (): Promise<void> => {
    inFlight ??= (async () => {
      lastAttempt = now();
      try {
        keys = await importKeys(await fetchJwks());
        fetchedAt = now();
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  };

  const keyFor = async (kid: string): Promise<VerificationKey> => {
    if (!keys) {
      try {
        await load();
      } catch (error) {
        options.onError?.(error);
        throw new TokenVerificationError("jwks-unavailable", "the platform's signing keys could not be fetched");
      }
    } else if (now() - fetchedAt >= refreshMs) {
      load().catch((error) => options.onError?.(error));
    }
    let key = keys?.get(kid);
    if (!key && now() - lastAttempt >= refetchMs) {
      await load().catch((error) => options.onError?.(error));
      key = keys?.get(kid);
    }
    if (!key) throw new TokenVerificationError("unknown-key", "the token was signed by an unknown signing key");
    return key;
  };

  return {
    refresh: load,
    async verify(token) {
      if (typeof token !== "string" || !looksLikeJwt(token)) {
        throw new TokenVerificationError("malformed", "the token is not a JWT");
      }
      let kid: unknown;
      try {
        kid = decodeProtectedHeader(token).kid;
      } catch {
        throw new TokenVerificationError("malformed", "the token header cannot be read");
      }
      if (typeof kid !== "string") throw new TokenVerificationError("malformed", "the token names no signing key");
      const key = await keyFor(kid);
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, key.key, {
          issuer: [...issuers()],
          audience,
          algorithms: [key.alg],
          currentDate: new Date(now()),
          clockTolerance: options.clockToleranceSeconds ?? 0,
        }));
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === "ERR_JWT_EXPIRED") throw new TokenVerificationError("expired", "the token has expired");
        // jose checks claims only once the signature holds: this is the platform's token, under another address.
        if (code === "ERR_JWT_CLAIM_VALIDATION_FAILED" && (error as { claim?: string }).claim === "iss") {
          throw new TokenVerificationError("unknown-issuer", "the token's issuer is not an address of this platform");
        }
        const detail = code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" ? "signature verification failed" : code;
        throw new TokenVerificationError("invalid", `the token is not valid: ${detail ?? "verification failed"}`);
      }
      const claims = privateClaims(payload);
      if (!claims) throw new TokenVerificationError("invalid", "the token lacks the platform's claims");
      const verified: VerifiedToken = {
        name: claims.name,
        uid: claims.uid,
        kind: claims.kind,
        gen: claims.gen,
        sub: String(payload.sub ?? ""),
        jti: claims.jti,
        iat: claims.iat,
        exp: claims.exp,
      };
      if (claims.scope) verified.scope = claims.scope;
      if (claims.teams) verified.teams = claims.teams;
      return verified;
    },
  };
}
