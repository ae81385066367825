// Public discovery of the platform's token signing keys (no authentication; /.well-known/* is a public path):
//   GET /.well-known/jwks.json              the published public keys (current and retired-but-valid), JWKS
//   GET /.well-known/openid-configuration   OpenID provider metadata naming the issuer and the JWKS
// The issuer is the platform's base URL, https://<platformHost or the listening host:port>, WITHOUT the
// /kubernetes/management API prefix: discovery then lives at <issuer>/.well-known/openid-configuration as OpenID
// Connect Discovery requires. (Every route is also served under the prefix, these two included.)

import type { FastifyInstance } from "fastify";
import { TOKEN_ALGORITHMS } from "../identity/token-claims.ts";

export const JWKS_PATH = "/.well-known/jwks.json";
export const OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration";
/** Short: verifiers refetch on an unknown kid anyway, and a rotation should reach caches soon. */
const CACHE_CONTROL = "public, max-age=60";

export interface WellKnownOptions {
  jwks(): { keys: unknown[] };
  /** The platform's base URL (the iss claim of its tokens). */
  issuer(): string;
}

/** OpenID provider metadata as Kubernetes serves it for service account issuers: no login endpoints of its own. */
export function openIdConfiguration(issuer: string): Record<string, unknown> {
  return {
    issuer,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [...TOKEN_ALGORITHMS],
    claims_supported: ["iss", "sub", "aud", "iat", "exp", "jti", "uid", "name", "kind", "gen", "scope"],
  };
}

export function wellKnownRoutes(options: WellKnownOptions): (app: FastifyInstance) => void {
  const json = (body: unknown) => JSON.stringify(body);
  return (app) => {
    app.get(JWKS_PATH, async (_request, reply) =>
      reply
        .code(200)
        .header("content-type", "application/jwk-set+json")
        .header("cache-control", CACHE_CONTROL)
        .send(json(options.jwks())),
    );
    app.get(OPENID_CONFIGURATION_PATH, async (_request, reply) =>
      reply
        .code(200)
        .header("content-type", "application/json")
        .header("cache-control", CACHE_CONTROL)
        .send(json(openIdConfiguration(options.issuer()))),
    );
  };
}
