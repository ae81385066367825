// idpB (Microsoft-shaped): OpenID Connect authorization code against https://login.microsoftonline.com/<tenant>/v2.0
// (oidc-client.ts: openid-client checks the shared tenants' templated issuer against each token's tid). The person
// is the verified ID token's tenant id and object id (<tid>/<oid>): immutable and never reassigned. Graph /v1.0/me gives the
// profile, and its `mail` is never counted as verified: any tenant's admin can set it to anyone's address ("nOAuth").
// A shared tenant (common, organizations, consumers) lets people of every tenant in, so it is refused unless the
// Config lists allowedTenants (tenant ids) or sets allowAllTenants (warned about in /auth/info and the log);
// allowedTenants narrows an organisation tenant too. Groups only for an organisation tenant: the ids from
// /me/getMemberGroups (securityEnabledOnly = onlySecurityGroups), the names from /directoryObjects/getByIds.
// `groups` is required membership; `useGroupsAsWhitelist` keeps only the configured groups.

import { claimString, configString, configStrings, notInGroups } from "./claims.ts";
import { ConfiguredConnector } from "./configured-connector.ts";
import { OidcClient } from "./oidc-client.ts";
import { ProviderHttp, providerUrl } from "./provider-http.ts";
import type { CallbackInput, LoginStart, SsoIdentity, StartInput } from "./types.ts";
import { SsoFailure, SsoRefusal } from "./types.ts";

const LOGIN = "https://login.microsoftonline.com";
const GRAPH = "https://graph.microsoft.com/v1.0";
export const SHARED_TENANTS: ReadonlySet<string> = new Set(["common", "consumers", "organizations"]);
const BATCH = 1000;
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class IdpBConnector extends ConfiguredConnector {
  readonly kind = "idpB";
  private readonly tenant: string;
  private readonly allowedTenants: string[];
  private readonly client: OidcClient;

  constructor(id: string, config: Record<string, unknown>) {
    super(id, config, new ProviderHttp("identity provider"));
    this.tenant = configString(config, "tenant") ?? "common";
    if (configStrings(config, "groups").length > 0 && SHARED_TENANTS.has(this.tenant)) {
      throw new Error(`idpB groups need an organisation tenant, not "${this.tenant}"`);
    }
    this.allowedTenants = configStrings(config, "allowedTenants").map((tenant) => tenant.toLowerCase());
    this.client = new OidcClient({
      issuer: `${LOGIN}/${encodeURIComponent(this.tenant)}/v2.0`,
      clientId: configString(config, "clientId") ?? "",
      clientSecret: configString(config, "clientSecret"),
      scopes: this.scope().split(" "),
      http: this.http,
      authorizeParams: { response_mode: "query" },
      browserUrl: providerUrl,
    });
  }

  /** Whether people of tenant `tid` may log in: see the file's comment. */
  private checkTenant(tid: string): void {
    if (this.allowedTenants.includes(tid)) return;
    if (this.allowedTenants.length === 0 && (this.organisation || this.config.allowAllTenants === true)) return;
    throw new SsoRefusal(
      "allowedTenants",
      this.allowedTenants.length > 0
        ? `your tenant ${tid} is not allowed to log in here (idpB allowedTenants: ${this.allowedTenants.join(", ")})`
        : `idpB tenant "${this.tenant}" takes accounts of every tenant, so logins are refused until an administrator lists allowedTenants (or sets allowAllTenants)`,
    );
  }

  private get organisation(): boolean {
    return !SHARED_TENANTS.has(this.tenant);
  }

  private scope(): string {
    return this.organisation ? "openid profile email user.read directory.read.all" : "openid profile email user.read";
  }

  async start(input: StartInput): Promise<LoginStart> {
    const { url, state } = await this.client.authorizationUrl(input.state, input.callbackUrl);
    return { type: "redirect", url, state };
  }

  async finish(input: CallbackInput): Promise<SsoIdentity> {
    const { claims, accessToken } = await this.client.finish(input.params, input.state, input.callbackUrl);
    const tid = claimString(claims, "tid")?.toLowerCase();
    const oid = claimString(claims, "oid");
    if (!tid || !TENANT_ID.test(tid) || !oid)
      throw new SsoFailure("the identity provider's ID token has no tid and oid");
    this.checkTenant(tid);
    if (!accessToken) throw new SsoFailure("the identity provider's token answer has no access_token");
    const headers = { authorization: `Bearer ${accessToken}` };
    const me = await this.http.json<{
      id?: unknown;
      displayName?: unknown;
      userPrincipalName?: unknown;
      mail?: unknown;
    }>(providerUrl(`${GRAPH}/me?$select=id,displayName,userPrincipalName,mail`), { headers });
    if (typeof me.id !== "string" || typeof me.userPrincipalName !== "string") {
      throw new SsoFailure("the identity provider's /me answer has no id and userPrincipalName");
    }
    if (me.id !== oid) throw new SsoFailure("the identity provider's /me is another person than its ID token");
    let groups = this.organisation ? await this.groupNames(headers) : [];
    const configured = configStrings(this.config, "groups");
    if (configured.length > 0) {
      if (!groups.some((group) => configured.includes(group))) {
        throw notInGroups("idpB groups", configured);
      }
      if (this.config.useGroupsAsWhitelist === true) groups = groups.filter((group) => configured.includes(group));
    }
    const mail = typeof me.mail === "string" && me.mail ? me.mail : undefined;
    return {
      userId: `${tid}/${oid}`,
      username: me.userPrincipalName,
      preferredUsername: me.userPrincipalName,
      displayName: typeof me.displayName === "string" && me.displayName ? me.displayName : undefined,
      email: mail ?? me.userPrincipalName,
      emailVerified: false,
      groups,
    };
  }

  private async groupNames(headers: Record<string, string>): Promise<string[]> {
    const ids = await this.http.json<{ value?: unknown }>(providerUrl(`${GRAPH}/me/getMemberGroups`), {
      headers,
      json: { securityEnabledOnly: this.config.onlySecurityGroups === true },
    });
    const list = Array.isArray(ids.value) ? ids.value.filter((v): v is string => typeof v === "string") : [];
    const names: string[] = [];
    for (let i = 0; i < list.length; i += BATCH) {
      const objects = await this.http.json<{ value?: { displayName?: unknown }[] }>(
        providerUrl(`${GRAPH}/directoryObjects/getByIds`),
        { headers, json: { ids: list.slice(i, i + BATCH), types: ["group"] } },
      );
      for (const object of objects.value ?? [])
        if (typeof object.displayName === "string") names.push(object.displayName);
    }
    return names;
  }
}
