// The shape of a direct cluster endpoint token, shared by the platform (issuer and authenticator) and the offline
// verifier that runs in the virtual cluster process, so it imports nothing at run time (the scope is a type only).
//
// A token is a JWS-signed JWT: header {alg: ES256|RS256, kid, typ: "JWT"}; registered claims iss (the platform's base
// URL), sub ("<user>" or "team:<team>"), aud (TOKEN_AUDIENCE), iat, exp, jti; private claims uid, name,
// kind (User|Team), gen (the user's tokenGeneration when issued; 0 for teams), scope (omitted when unscoped) and
// teams (the user's teams when issued, omitted when none: a direct endpoint impersonates them as groups).

import type { AccessKeyScope } from "../apis/management/v1/ownedaccesskey-schema.ts";

/** Tokens name their consumer: other JWTs the platform may sign one day cannot be replayed as endpoint tokens. */
export const TOKEN_AUDIENCE = "management.platform.sh/direct-cluster-endpoint";
export const TOKEN_ALGORITHMS = ["ES256", "RS256"] as const;
/** The access-key type a token's caller is described with (selves, audit). */
export const TOKEN_KEY_TYPE = "DirectClusterEndpointToken";

export type TokenScope = AccessKeyScope;

export interface TokenClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
  uid: string;
  name: string;
  kind: "User" | "Team";
  gen: number;
  scope?: TokenScope;
  teams?: string[];
}

/** The private claims, checked for type: undefined when the payload is not one of our tokens. */
export function privateClaims(payload: Record<string, unknown>): Omit<TokenClaims, "iss" | "sub" | "aud"> | undefined {
  const { uid, name, kind, gen, scope, iat, exp, jti, teams } = payload;
  if (typeof uid !== "string" || typeof name !== "string" || (kind !== "User" && kind !== "Team")) return undefined;
  if (typeof gen !== "number" || !Number.isInteger(gen) || gen < 0) return undefined;
  if (typeof iat !== "number" || typeof exp !== "number" || typeof jti !== "string") return undefined;
  if (scope !== undefined && (scope === null || typeof scope !== "object" || Array.isArray(scope))) return undefined;
  const claims: Omit<TokenClaims, "iss" | "sub" | "aud"> = { uid, name, kind, gen, iat, exp, jti };
  if (scope !== undefined) claims.scope = scope as TokenScope;
  if (teams !== undefined) {
    if (!Array.isArray(teams) || !teams.every((team) => typeof team === "string")) return undefined;
    claims.teams = teams;
  }
  return claims;
}

/** Whether a bearer token has the JWS compact form (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  // The dot test first: access keys (no dots) reach this on every request.
  return token.includes(".") && /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}
