// The generic OIDC connector (auth.oidc, or an oidc block of auth.connectors): claims mapped the way the config
// says (usernameClaim as the user id, platformUsernameClaim / preferredUsername + usernamePrefix as the suggested
// username, emailClaim, groupsClaim + groupsPrefix, allowedExtraClaims), getUserInfo merges the userinfo claims,
// `groups` requires membership, `resource` goes on the token request, caFile / insecureCa set the trust.

import { claimString, claimStrings, configString, configStrings, notInGroups, readConfiguredFile } from "./claims.ts";
import { ConfiguredConnector } from "./configured-connector.ts";
import { OidcClient } from "./oidc-client.ts";
import { ProviderHttp } from "./provider-http.ts";
import type { CallbackInput, LoginStart, SsoIdentity, StartInput } from "./types.ts";
import { SsoRefusal } from "./types.ts";

/** openid is always needed; email and profile are the spec's default. */
export function oidcScopes(configured: string[], defaults: string[]): string[] {
  const scopes = configured.length > 0 ? configured : defaults;
  return scopes.includes("openid") ? scopes : ["openid", ...scopes];
}

export class OidcConnector extends ConfiguredConnector {
  readonly kind = "oidc";
  private readonly client: OidcClient;

  constructor(id: string, config: Record<string, unknown>) {
    const caFile = configString(config, "caFile");
    const caPem = caFile ? readConfiguredFile("caFile", caFile) : undefined;
    super(id, config, new ProviderHttp("OIDC provider", { caPem, insecure: config.insecureCa === true }));
    const resource = configString(config, "resource");
    this.client = new OidcClient({
      issuer: configString(config, "issuerUrl") ?? "",
      clientId: configString(config, "clientId") ?? "",
      clientSecret: configString(config, "clientSecret"),
      scopes: oidcScopes(configStrings(config, "scopes"), ["email", "profile"]),
      http: this.http,
      tokenParams: resource ? { resource } : undefined,
    });
  }

  async start(input: StartInput): Promise<LoginStart> {
    const { url, state } = await this.client.authorizationUrl(input.state, input.callbackUrl);
    return { type: "redirect", url, state };
  }

  async finish(input: CallbackInput): Promise<SsoIdentity> {
    const { claims: idClaims, accessToken } = await this.client.finish(input.params, input.state, input.callbackUrl);
    let claims: Record<string, unknown> = { ...idClaims };
    if (this.config.getUserInfo === true && accessToken) {
      claims = { ...claims, ...(await this.client.userInfo(accessToken, String(idClaims.sub))) };
    }
    return mapOidcClaims(this.config, claims);
  }

  logoutUrl(input: { postLogoutRedirectURI?: string }): Promise<string | undefined> {
    return this.client.endSessionUrl(input.postLogoutRedirectURI);
  }
}

/** The identity the OIDC block's claim settings describe; refuses a user outside the required groups. */
export function mapOidcClaims(config: Record<string, unknown>, claims: Record<string, unknown>): SsoIdentity {
  const usernameClaim = configString(config, "usernameClaim") ?? "sub";
  const id = claimString(claims, usernameClaim);
  if (!id)
    throw new SsoRefusal("usernameClaim", `the provider's token has no "${usernameClaim}" claim (usernameClaim)`);
  const emailClaim = configString(config, "emailClaim") ?? "email";
  const email = claimString(claims, emailClaim);
  // Only a JSON true counts (as kube-apiserver reads it): absent, false, "true" or anything else is unverified.
  const emailVerified = emailClaim === "email" && email !== undefined && claims.email_verified === true;
  if (usernameClaim === "email" && claims.email_verified !== true) {
    throw new SsoRefusal(
      "usernameClaim",
      "the provider does not state your e-mail verified (email_verified), and usernameClaim makes the e-mail your identity here",
    );
  }
  const prefix = configString(config, "usernamePrefix") ?? "";
  const nameClaim =
    configString(config, "platformUsernameClaim") ?? configString(config, "preferredUsername") ?? "preferred_username";

  const groupsClaim = configString(config, "groupsClaim") ?? "groups";
  const rawGroups = claimStrings(claims, groupsClaim);
  if (rawGroups === undefined) {
    throw new SsoRefusal(
      "groupsClaim",
      `the "${groupsClaim}" claim must be a string or a list of strings (groupsClaim)`,
    );
  }
  const required = configStrings(config, "groups");
  if (required.length > 0 && !rawGroups.some((group) => required.includes(group))) {
    throw notInGroups("oidc groups", required);
  }
  const groupsPrefix = configString(config, "groupsPrefix") ?? "";
  const extraClaims: Record<string, string[]> = {};
  for (const name of configStrings(config, "allowedExtraClaims")) {
    const values = claimStrings(claims, name);
    if (values && values.length > 0) extraClaims[name] = values;
  }
  const preferred = claimString(claims, nameClaim);
  return {
    userId: id,
    username: `${prefix}${preferred ?? id}`,
    preferredUsername: preferred,
    email,
    emailVerified,
    displayName: claimString(claims, "name"),
    groups: rawGroups.map((group) => `${groupsPrefix}${group}`),
    extraClaims: Object.keys(extraClaims).length > 0 ? extraClaims : undefined,
  };
}
