// codeHostB (GitLab-shaped): OAuth authorization code against <baseURL>/oauth/*, the user from /api/v4/user (its
// numeric id identifies the person: the username is renamable), the groups and whether the e-mail is verified from
// /oauth/userinfo (scope openid). `groups` is an allow-list: only listed groups are kept, and a user in none of them
// is refused.

import { configString, configStrings, notInGroups } from "./claims.ts";
import { numericId } from "./code-host-a-connector.ts";
import { ConfiguredConnector } from "./configured-connector.ts";
import { authorizationUrl, callbackCode, exchangeCode } from "./oauth2.ts";
import { ProviderHttp, providerUrl } from "./provider-http.ts";
import type { CallbackInput, LoginStart, SsoIdentity, StartInput } from "./types.ts";
import { SsoFailure } from "./types.ts";

export class CodeHostBConnector extends ConfiguredConnector {
  readonly kind = "codeHostB";
  private readonly base: string;

  constructor(id: string, config: Record<string, unknown>) {
    super(id, config, new ProviderHttp("code host"));
    this.base = (configString(config, "baseURL") ?? providerUrl("https://gitlab.com")).replace(/\/+$/, "");
  }

  async start(input: StartInput): Promise<LoginStart> {
    const url = authorizationUrl(`${this.base}/oauth/authorize`, {
      client_id: configString(this.config, "clientId") ?? "",
      redirect_uri: input.callbackUrl,
      response_type: "code",
      scope: "read_user openid",
      state: input.state,
    });
    return { type: "redirect", url, state: {} };
  }

  async finish(input: CallbackInput): Promise<SsoIdentity> {
    const token = await exchangeCode(this.http, `${this.base}/oauth/token`, {
      client_id: configString(this.config, "clientId") ?? "",
      client_secret: configString(this.config, "clientSecret") ?? "",
      code: callbackCode(input.params),
      redirect_uri: input.callbackUrl,
    });
    const headers = { authorization: `Bearer ${token}` };
    const user = await this.http.json<{ id?: unknown; username?: unknown; name?: unknown; email?: unknown }>(
      `${this.base}/api/v4/user`,
      { headers },
    );
    if (typeof user.username !== "string" || !numericId(user.id)) {
      throw new SsoFailure("the code host's /api/v4/user answer has no numeric id and username");
    }
    const info = await this.http.json<{ groups?: unknown; email?: unknown; email_verified?: unknown }>(
      `${this.base}/oauth/userinfo`,
      { headers },
    );
    let groups = Array.isArray(info.groups) ? info.groups.filter((g): g is string => typeof g === "string") : [];
    const allowed = configStrings(this.config, "groups");
    if (allowed.length > 0) {
      groups = groups.filter((group) => allowed.includes(group));
      if (groups.length === 0) {
        throw notInGroups("codeHostB groups", allowed);
      }
    }
    const email = typeof user.email === "string" && user.email ? user.email : undefined;
    return {
      userId: String(user.id),
      username: user.username,
      preferredUsername: user.username,
      displayName: typeof user.name === "string" && user.name ? user.name : undefined,
      email,
      // Verified only when the OpenID userinfo states it for this very address.
      emailVerified: email !== undefined && info.email === email && info.email_verified === true,
      groups,
    };
  }
}
