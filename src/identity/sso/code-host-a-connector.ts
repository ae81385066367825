// codeHostA (GitHub-shaped): OAuth authorization code against <host>/login/oauth/*, the user from the API's /user
// (its numeric id identifies the person: the login is renamable) and /user/emails (the primary verified address),
// and with `orgs` the memberships from /user/orgs and /user/teams:
// the user must belong to a listed org (and, when it lists teams, to one of them). Groups are `org:team`.
// `hostName` points everything at an enterprise host (API under /api/v3); `rootCA` (a PEM, or a path to one) is
// trusted for it.

import { configString, readConfiguredFile } from "./claims.ts";
import { ConfiguredConnector } from "./configured-connector.ts";
import { authorizationUrl, callbackCode, exchangeCode } from "./oauth2.ts";
import { ProviderHttp, providerUrl } from "./provider-http.ts";
import type { CallbackInput, LoginStart, SsoIdentity, StartInput } from "./types.ts";
import { SsoFailure, SsoRefusal } from "./types.ts";

interface OrgRule {
  name: string;
  teams: string[];
}

const MAX_PAGES = 10;

/** The code hosts' account ids are integers (a number, or digits): never reassigned, unlike logins. */
export function numericId(value: unknown): value is number | string {
  return (
    (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) ||
    (typeof value === "string" && /^[0-9]{1,20}$/.test(value))
  );
}

function pemOrFile(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (value.includes("-----BEGIN")) return value;
  return readConfiguredFile("rootCA", value);
}

export class CodeHostAConnector extends ConfiguredConnector {
  readonly kind = "codeHostA";
  private readonly web: string;
  private readonly api: string;
  private readonly orgs: OrgRule[];

  constructor(id: string, config: Record<string, unknown>) {
    const hostName = configString(config, "hostName");
    const caPem = hostName ? pemOrFile(configString(config, "rootCA")) : undefined;
    super(id, config, new ProviderHttp("code host", { caPem }));
    this.web = hostName ? `https://${hostName}` : providerUrl("https://github.com");
    this.api = hostName ? `https://${hostName}/api/v3` : providerUrl("https://api.github.com");
    this.orgs = (Array.isArray(config.orgs) ? config.orgs : [])
      .filter((org): org is { name: string; teams?: unknown } => typeof org?.name === "string" && org.name !== "")
      .map((org) => ({
        name: org.name,
        teams: Array.isArray(org.teams) ? org.teams.filter((t): t is string => typeof t === "string") : [],
      }));
  }

  async start(input: StartInput): Promise<LoginStart> {
    const url = authorizationUrl(`${this.web}/login/oauth/authorize`, {
      client_id: configString(this.config, "clientId") ?? "",
      redirect_uri: input.callbackUrl,
      scope: this.orgs.length > 0 ? "user:email read:org" : "user:email",
      state: input.state,
    });
    return { type: "redirect", url, state: {} };
  }

  async finish(input: CallbackInput): Promise<SsoIdentity> {
    const code = callbackCode(input.params);
    const token = await exchangeCode(this.http, `${this.web}/login/oauth/access_token`, {
      client_id: configString(this.config, "clientId") ?? "",
      client_secret: configString(this.config, "clientSecret") ?? "",
      code,
      redirect_uri: input.callbackUrl,
    });
    const get = <T>(path: string) =>
      this.http.json<T>(`${this.api}${path}`, {
        headers: { authorization: `Bearer ${token}`, accept: "application/vnd.github+json" },
      });
    const user = await get<{ id?: unknown; login?: unknown; name?: unknown; email?: unknown }>("/user");
    if (typeof user.login !== "string" || !numericId(user.id)) {
      throw new SsoFailure("the code host's /user answer has no numeric id and login");
    }
    const emails = await get<{ email: string; primary?: boolean; verified?: boolean }[]>("/user/emails").catch(
      () => [],
    );
    const primary = Array.isArray(emails) ? emails.find((e) => e.primary && e.verified) : undefined;
    const groups = this.orgs.length > 0 ? await this.groups(get) : [];
    return {
      userId: String(user.id),
      username: user.login,
      preferredUsername: user.login,
      displayName: typeof user.name === "string" && user.name ? user.name : undefined,
      email: primary?.email,
      emailVerified: primary !== undefined,
      groups,
    };
  }

  /** `org:team` of the configured orgs; refuses a user in none of them (or in none of an org's listed teams). */
  private async groups(get: <T>(path: string) => Promise<T>): Promise<string[]> {
    const pages = async <T>(path: string): Promise<T[]> => {
      const out: T[] = [];
      for (let page = 1; page <= MAX_PAGES; page++) {
        const items = await get<T[]>(`${path}?per_page=100&page=${page}`);
        if (!Array.isArray(items)) break;
        out.push(...items);
        if (items.length < 100) break;
      }
      return out;
    };
    const orgs = new Set((await pages<{ login: string }>("/user/orgs")).map((o) => o.login.toLowerCase()));
    const teams = await pages<{ name: string; slug: string; organization?: { login?: string } }>("/user/teams");
    const groups: string[] = [];
    let allowed = false;
    for (const rule of this.orgs) {
      const inOrg = teams.filter((t) => t.organization?.login?.toLowerCase() === rule.name.toLowerCase());
      if (!orgs.has(rule.name.toLowerCase()) && inOrg.length === 0) continue;
      const matching =
        rule.teams.length === 0
          ? inOrg
          : inOrg.filter((t) => rule.teams.includes(t.name) || rule.teams.includes(t.slug));
      if (rule.teams.length === 0 || matching.length > 0) allowed = true;
      groups.push(...matching.map((t) => `${rule.name}:${t.slug || t.name}`));
    }
    if (!allowed) {
      const listed = this.orgs.map((o) => (o.teams.length ? `${o.name} (teams ${o.teams.join(", ")})` : o.name));
      throw new SsoRefusal(
        "orgs",
        `you are not a member of the required organizations or teams (codeHostA orgs: ${listed.join("; ")})`,
      );
    }
    return groups;
  }
}
