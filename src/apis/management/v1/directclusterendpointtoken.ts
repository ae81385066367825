// DirectClusterEndpointToken (POST `directclusterendpointtokens`, 201; create-only, nothing stored): a signed token
// (JWT) for the direct endpoint of a connected cluster, in status.token, for the calling user or team.
//  - spec.ttl: seconds, positive. Omitted: DEFAULT_TOKEN_TTL_SECONDS (one hour). Longer than the platform's maximum
//    access key lifetime (auth.accessKeyMaxTTLSeconds, when set) or than MAX_TOKEN_TTL_SECONDS (seven days, which
//    bounds how long a retired signing key must stay published) is reduced to it, with a warning, as access keys are.
//  - spec.scope: an access-key scope (same schema and canonical form); it may not exceed the caller's own scope.
// The response is the only place the token appears: it is never stored, and the audit policy never logs this
// resource's bodies (a token field is redacted under any policy).

import { errors } from "../../../apimachinery/errors.ts";
import { fieldError } from "../../../apimachinery/field-errors.ts";
import { compileObjectSchema } from "../../../apimachinery/schema.ts";
import { describedAs, integer, object, type Static, string } from "../../../apimachinery/schema-builders.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";
import { deprecatedScopeWarnings } from "./deprecated-key-fields.ts";
import { decodeActionSpec } from "./directclusterendpointtoken-decode.ts";
import { type AccessKeyScope, canonicalizeScope, scopeSchema } from "./ownedaccesskey-schema.ts";

export const TOKEN_KIND = "DirectClusterEndpointToken";
export const DEFAULT_TOKEN_TTL_SECONDS = 60 * 60;
export const MAX_TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;

export interface EndpointTokenRequest {
  context: RequestContext;
  ttlSeconds: number;
  scope?: AccessKeyScope;
}

export interface EndpointTokenIssuer {
  /**
   * Signs a token for the caller. Throws 403 when the caller cannot have one (no user or team behind it) or the scope
   * asks for more than the caller's own scope. Resolves to the token and the scope it carries.
   */
  issue(request: EndpointTokenRequest): Promise<{ token: string; scope?: AccessKeyScope }>;
  /** The platform's maximum access key lifetime in seconds (0: none), read at every request. */
  maxTTLSeconds(): number;
}

const schema = {
  spec: object(
    {
      ttl: integer(
        `Time to live of the token in seconds (positive). Omitted: ${DEFAULT_TOKEN_TTL_SECONDS}. At most ${MAX_TOKEN_TTL_SECONDS} and the platform's maximum access key lifetime.`,
      ),
      scope: describedAs(
        scopeSchema,
        "Optional scope of the token, as an access key's scope. It may not exceed the scope of the caller's own key; omitted, the token has the caller's scope.",
      ),
    },
    "The token to issue.",
  ),
  status: object(
    { token: string("The signed token (a JWT), shown only in this response; use it as a bearer token.") },
    "The issued token.",
  ),
};
/** What a client asks for. */
type TokenSpec = Static<typeof schema.spec>;
const compiled = compileObjectSchema(schema);
const KIND = { group: GROUP, kind: TOKEN_KIND };

/** The lifetime to sign: the one asked for (or the default), reduced to the limits in force. */
function lifetime(ttl: number | undefined, settingsMax: number, context: RequestContext): number {
  if (ttl !== undefined && ttl <= 0) {
    throw errors.invalid(KIND, "", [fieldError.invalid("spec.ttl", ttl, "must be a positive number of seconds")]);
  }
  const limit = settingsMax > 0 ? Math.min(settingsMax, MAX_TOKEN_TTL_SECONDS) : MAX_TOKEN_TTL_SECONDS;
  const wanted = ttl ?? DEFAULT_TOKEN_TTL_SECONDS;
  if (wanted <= limit) return wanted;
  if (ttl !== undefined) {
    const why = limit === settingsMax ? "the platform's maximum access key lifetime" : "the maximum token lifetime";
    context.warnings.push(`spec.ttl was reduced to ${why} of ${limit} seconds`);
  }
  return limit;
}

export function createDirectClusterEndpointTokenDefinition(issuer: EndpointTokenIssuer): ResourceDefinition {
  const description = "DirectClusterEndpointToken issues a signed token for a direct cluster endpoint.";
  return {
    group: GROUP,
    version: VERSION,
    kind: TOKEN_KIND,
    plural: "directclusterendpointtokens",
    singular: "directclusterendpointtoken",
    namespaced: false,
    description,
    schema,
    strategy: {},
    authorization: {
      // Anyone may ask for a token; it carries (at most) the caller's own scope, which the issuer checks.
      ownerRights: { holder: "anyone", verbs: ["create"] },
      credentials: [{ verbs: "*", boundedBy: "scope" }],
    },
    action: {
      kind: TOKEN_KIND,
      description,
      schema,
      verbs: ["create"],
      async handle({ context, body }) {
        const spec = decodeActionSpec<TokenSpec>(body, TOKEN_KIND, compiled, context);
        canonicalizeScope(spec.scope);
        context.warnings.push(...deprecatedScopeWarnings(spec.scope));
        const ttlSeconds = lifetime(spec.ttl, issuer.maxTTLSeconds(), context);
        const issued = await issuer.issue({ context, ttlSeconds, scope: spec.scope });
        const response: KubeObject = {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: TOKEN_KIND,
          metadata: {},
          spec: issued.scope ? { ttl: ttlSeconds, scope: issued.scope } : { ttl: ttlSeconds },
          status: { token: issued.token },
        };
        return response;
      },
    },
  };
}
