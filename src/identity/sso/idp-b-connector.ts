// idpB (Microsoft-shaped): OAuth authorization code against
// https://login.microsoftonline.com/<tenant>/oauth2/v2.0/{authorize,token}, the user from Graph /v1.0/me. Groups
// only for an organisation tenant (not common, consumers, organizations): the ids from /me/getMemberGroups
// (securityEnabledOnly = onlySecurityGroups), the names from /directoryObjects/getByIds. `groups` is required
// membership; `useGroupsAsWhitelist` keeps only the configured groups.

import { configString, configStrings, notInGroups } from "./claims.ts";
import { ConfiguredConnector } from "./configured-connector.ts";
import { authorizationUrl, callbackCode, exchangeCode } from "./oauth2.ts";
import { ProviderHttp, providerUrl } from "./provider-http.ts";
import type { CallbackInput, LoginStart, SsoIdentity, StartInput } from "./types.ts";
import { SsoFailure } from "./types.ts";

const LOGIN = "https://login.microsoftonline.com";
const GRAPH = "https://graph.microsoft.com/v1.0";
const SHARED_TENANTS = new Set(["common", "consumers", "organizations"]);
const BATCH = 1000;

export class IdpBConnector extends ConfiguredConnector {
  readonly kind = "idpB";
  private readonly tenant: string;

  constructor(id: string, config: Record<string, unknown>) {
    super(id, config, new ProviderHttp("identity provider"));
    this.tenant = configString(config, "tenant") ?? "common";
    if (configStrings(config, "groups").length > 0 && SHARED_TENANTS.has(this.tenant)) {
      throw new Error(`idpB groups need an organisation tenant, not "${this.tenant}"`);
    }
  }

  private get organisation(): boolean {
    return !SHARED_TENANTS.has(this.tenant);
  }

  private scope(): string {
    return this.organisation ? "openid profile email user.read directory.read.all" : "openid profile email user.read";
  }

  async start(input: StartInput): Promise<LoginStart> {
    const url = authorizationUrl(providerUrl(`${LOGIN}/${encodeURIComponent(this.tenant)}/oauth2/v2.0/authorize`), {
      client_id: configString(this.config, "clientId") ?? "",
      redirect_uri: input.callbackUrl,
      response_type: "code",
      response_mode: "query",
      scope: this.scope(),
      state: input.state,
    });
    return { type: "redirect", url, state: {} };
  }

  async finish(input: CallbackInput): Promise<SsoIdentity> {
    const token = await exchangeCode(
      this.http,
      providerUrl(`${LOGIN}/${encodeURIComponent(this.tenant)}/oauth2/v2.0/token`),
      {
        client_id: configString(this.config, "clientId") ?? "",
        client_secret: configString(this.config, "clientSecret") ?? "",
        code: callbackCode(input.params),
        redirect_uri: input.callbackUrl,
        scope: this.scope(),
      },
    );
    const headers = { authorization: `Bearer ${token}` };
    const me = await this.http.json<{
      id?: unknown;
      displayName?: unknown;
      userPrincipalName?: unknown;
      mail?: unknown;
    }>(providerUrl(`${GRAPH}/me?$select=id,displayName,userPrincipalName,mail`), { headers });
    if (typeof me.id !== "string" || typeof me.userPrincipalName !== "string") {
      throw new SsoFailure("the identity provider's /me answer has no id and userPrincipalName");
    }
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
      userId: me.id,
      username: me.userPrincipalName,
      preferredUsername: me.userPrincipalName,
      displayName: typeof me.displayName === "string" && me.displayName ? me.displayName : undefined,
      email: mail ?? me.userPrincipalName,
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
