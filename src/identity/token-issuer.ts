// Signs direct cluster endpoint tokens for the caller of a request, with the ring's current key (jose). The token is
// for the caller's user or team as the auth index knows it now (uid and tokenGeneration pinned in the claims); its
// scope is the one asked for, which a scoped caller may only narrow (no scope asked: the caller's own scope).
// Nothing is stored: revocation is by expiry, the user's tokenGeneration, disabling or deleting the user or team.

import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { errors } from "../apimachinery/errors.ts";
import { fieldError, formatFieldError } from "../apimachinery/field-errors.ts";
import { GROUP } from "../apis/management/v1/common.ts";
import type { EndpointTokenRequest } from "../apis/management/v1/directclusterendpointtoken.ts";
import type { AccessKeyScope } from "../apis/management/v1/ownedaccesskey-schema.ts";
import type { SigningKeyRing } from "../auth/signing/key-ring.ts";
import type { AuthIndex } from "./auth-index.ts";
import { principalOf } from "./principal.ts";
import { compileScope } from "./scope.ts";
import { scopeExcess } from "./scope-within.ts";
import { TOKEN_AUDIENCE, TOKEN_KEY_TYPE, type TokenClaims } from "./token-claims.ts";

export interface TokenIssuerOptions {
  ring: SigningKeyRing;
  index: AuthIndex;
  /** Resolves once every committed write is in the index. */
  fresh: () => Promise<void>;
  /** The platform's base URL (the iss claim). */
  issuer: () => string;
  /** Prefix of project namespaces (a token's spaces are checked in their projects). */
  namespacePrefix?: () => string;
  now?: () => number;
}

const RESOURCE = { group: GROUP, resource: "directclusterendpointtokens" };
/** What fits in an Authorization header everywhere (Node's whole header limit is 16 KiB). */
export const MAX_TOKEN_BYTES = 8 * 1024;
const refuse = (reason: string) => errors.forbidden(RESOURCE, "", reason);

export class TokenIssuer {
  readonly #options: TokenIssuerOptions;
  readonly #now: () => number;

  constructor(options: TokenIssuerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async issue(request: EndpointTokenRequest): Promise<{ token: string; scope?: AccessKeyScope; claims: TokenClaims }> {
    const { context, ttlSeconds } = request;
    const principal = principalOf(context.user);
    if (!principal || principal.kind === "Subject") {
      throw refuse(`User "${context.user.name}" cannot get a token: tokens are issued to users and teams only`);
    }
    if (principal.key.type === TOKEN_KEY_TYPE) {
      throw refuse("a direct cluster endpoint token cannot be used to get another one");
    }
    const scope = this.#scopeFor(request.scope, principal.key.scope);
    await this.#checkReach(context, scope);
    await this.#options.fresh();
    const { index } = this.#options;
    let gen = 0;
    if (principal.kind === "User") {
      const user = index.user(principal.name);
      if (!user || user.uid !== principal.uid)
        throw errors.unauthorized("the user of this access key no longer exists");
      if (user.disabled) throw errors.unauthorized("user is disabled");
      gen = user.tokenGeneration;
    } else {
      const team = index.team(principal.name);
      if (!team || team.uid !== principal.uid)
        throw errors.unauthorized("the team of this access key no longer exists");
    }
    const key = this.#options.ring.current();
    const iat = Math.floor(this.#now() / 1000);
    const claims: TokenClaims = {
      iss: this.#options.issuer(),
      sub: principal.kind === "Team" ? `team:${principal.name}` : principal.name,
      aud: TOKEN_AUDIENCE,
      iat,
      exp: iat + ttlSeconds,
      jti: randomUUID(),
      uid: principal.uid ?? "",
      name: principal.name,
      kind: principal.kind,
      gen,
    };
    if (scope) claims.scope = scope;
    if (principal.kind === "User" && principal.teams.length) claims.teams = principal.teams.map((team) => team.name);
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
      .sign(key.privateKey);
    if (token.length > MAX_TOKEN_BYTES) {
      throw errors.invalid({ group: GROUP, kind: "DirectClusterEndpointToken" }, "", [
        fieldError.forbidden(
          "spec.scope",
          `too large: the token would be ${token.length} bytes, more than the ${MAX_TOKEN_BYTES} an Authorization header takes`,
        ),
      ]);
    }
    return { token, scope, claims };
  }

  /**
   * A token is for direct endpoints, which cannot ask the platform: the clusters it names must be ones the caller
   * may use, and the spaces ones it may see, when it is issued ("*": every cluster, which only admins may use; a
   * project "*": the spaces of every project, which only a caller who may list them all sees).
   */
  async #checkReach(context: EndpointTokenRequest["context"], scope: AccessKeyScope | undefined): Promise<void> {
    const ask = async (verb: string, resource: string, name: string | undefined, namespace?: string) =>
      (
        await context.authorizer.authorize({
          user: context.user,
          verb,
          group: GROUP,
          resource,
          namespace,
          name: name === "*" ? undefined : name,
          resourceRequest: true,
        })
      ).allowed;
    for (const { cluster } of scope?.clusters ?? []) {
      if (cluster && !(await ask("use", "clusters", cluster))) {
        throw refuse(`User "${context.user.name}" cannot use cluster "${cluster}", so cannot get a token for it`);
      }
    }
    const prefix = this.#options.namespacePrefix?.();
    if (prefix === undefined) return;
    for (const { project, space } of scope?.spaces ?? []) {
      if (!project) continue;
      if (project === "*") {
        if (!(await ask("list", "spaceinstances", undefined))) {
          throw refuse(`User "${context.user.name}" cannot see the spaces of every project (scope.spaces project "*")`);
        }
        continue;
      }
      if (!(await ask(space === "*" || !space ? "list" : "get", "spaceinstances", space, `${prefix}${project}`))) {
        throw refuse(`User "${context.user.name}" cannot see space "${space ?? "*"}" of project "${project}"`);
      }
    }
  }

  /** The scope to sign: the one asked for, within the caller's own (which it defaults to). */
  #scopeFor(asked: AccessKeyScope | undefined, own: AccessKeyScope | undefined): AccessKeyScope | undefined {
    const wanted = asked && compileScope(asked) ? asked : undefined;
    if (!own || !compileScope(own)) return wanted;
    if (!wanted) return structuredClone(own);
    const excess = scopeExcess(wanted, own);
    if (excess.length) {
      throw refuse(`the requested scope is wider than the caller's: ${excess.map(formatFieldError).join("; ")}`);
    }
    return wanted;
  }
}
