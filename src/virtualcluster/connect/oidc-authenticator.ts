// OpenID Connect authentication of the virtual cluster's API server, as kube-apiserver's --oidc-* flags do it: a
// bearer JWT whose `iss` is the configured issuer (such as the platform's https://<platformHost>/oidc) is verified
// against the issuer's discovery and JWKS (signature, issuer, audience = the client ID, expiry); its user name comes
// from usernameClaim (prefixed with "<issuer>#" unless the claim is email or a prefix is set, "-" for none; an email
// needs email_verified true in the token, absent counting as unverified) and its
// groups from groupsClaim. Tokens of other issuers are left to the next authenticator. What such a user may do is
// the virtual cluster's RBAC: bind the user or one of its groups. No token names a system: user or group.

import { decodeJwt } from "jose";
import { errors } from "../../apimachinery/errors.ts";
import { requestBearerToken } from "../../auth/access-key-material.ts";
import type { AuthenticationRequest, Authenticator } from "../../auth/types.ts";
import { OidcClient } from "../../identity/sso/oidc-client.ts";
import { ProviderHttp } from "../../identity/sso/provider-http.ts";
import type { UserInfo } from "../../registry/types.ts";
import type { OidcAuthenticationSettings } from "../settings/types.ts";

const looksLikeJwt = (token: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);

/** The `iss` of a JWT, unverified (only to tell whose token it is). */
function issuerOf(token: string): unknown {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

export interface OidcAuthenticatorOptions {
  /** The contents of settings.caFile. */
  caPem?: string;
  /** Verification of a token's signature and registered claims; default: discovery and JWKS of the issuer. */
  verifyJwt?(token: string): Promise<Record<string, unknown>>;
}

export class OidcAuthenticator implements Authenticator {
  readonly #settings: OidcAuthenticationSettings;
  readonly #verifyJwt: (token: string) => Promise<Record<string, unknown>>;

  constructor(settings: OidcAuthenticationSettings, options: OidcAuthenticatorOptions = {}) {
    this.#settings = settings;
    const client = new OidcClient({
      issuer: settings.issuerURL,
      clientId: settings.clientID,
      scopes: [],
      http: new ProviderHttp("OIDC issuer", { caPem: options.caPem }),
    });
    this.#verifyJwt = options.verifyJwt ?? ((token) => client.verifyJwt(token));
  }

  authenticate(request: AuthenticationRequest): Promise<UserInfo> | undefined {
    const token = requestBearerToken(request);
    if (!token || !looksLikeJwt(token) || issuerOf(token) !== this.#settings.issuerURL) return undefined;
    return this.#verify(token);
  }

  async #verify(token: string): Promise<UserInfo> {
    let claims: Record<string, unknown>;
    try {
      claims = await this.#verifyJwt(token);
    } catch (error) {
      throw errors.unauthorized(`invalid OIDC token: ${error instanceof Error ? error.message : "rejected"}`);
    }
    const { usernameClaim, usernamePrefix, groupsClaim, groupsPrefix = "", issuerURL } = this.#settings;
    const name = claims[usernameClaim];
    if (typeof name !== "string" || name === "") {
      throw errors.unauthorized(`the OIDC token has no ${usernameClaim} claim to name the user by`);
    }
    // kube-apiserver's rule, strictly: an e-mail names a user only when the issuer states it verified (a JSON true).
    // The platform's tokens say false for an address the user set themselves.
    if (usernameClaim === "email" && claims.email_verified !== true) {
      throw errors.unauthorized("the OIDC token's email is not verified (email_verified must be true)");
    }
    const prefix =
      usernamePrefix === undefined
        ? usernameClaim === "email"
          ? ""
          : `${issuerURL}#`
        : usernamePrefix === "-"
          ? ""
          : usernamePrefix;
    const groups = groupsClaim ? claims[groupsClaim] : undefined;
    const list = typeof groups === "string" ? [groups] : Array.isArray(groups) ? groups : [];
    if (groups !== undefined && !list.every((group) => typeof group === "string")) {
      throw errors.unauthorized(`the OIDC token's ${groupsClaim} claim must be a string or a list of strings`);
    }
    // The system: names are the cluster's own (system:masters is every right): no token claims one.
    if (`${prefix}${name}`.startsWith("system:"))
      throw errors.unauthorized("an OIDC user name cannot start with system:");
    const named = (list as string[]).map((group) => `${groupsPrefix}${group}`).filter((g) => !g.startsWith("system:"));
    return {
      name: `${prefix}${name}`,
      uid: typeof claims.sub === "string" ? claims.sub : undefined,
      groups: [...named, "system:authenticated"],
      extra: { "virtualcluster.platform.sh/authenticated-by": ["oidc"] },
    };
  }
}
