// idpA (Google-shaped): OpenID Connect with the issuer https://accounts.google.com. `hostedDomains` sends `hd` on
// the authorization request and requires the ID token's `hd` claim to be one of them. `groups` are read from the
// Admin Directory API (groups.list?userKey=<email>) with a service-account JWT grant (scope
// admin.directory.group.readonly, subject adminEmail, exchanged at the file's token_uri); the user must be in one
// of the configured groups, and only those are kept.

import { importPKCS8, SignJWT } from "jose";
import { claimString, configString, configStrings, notInGroups, readConfiguredFile } from "./claims.ts";
import { ConfiguredConnector } from "./configured-connector.ts";
import { OidcClient } from "./oidc-client.ts";
import { oidcScopes } from "./oidc-connector.ts";
import { ProviderHttp, providerUrl } from "./provider-http.ts";
import type { CallbackInput, LoginStart, SsoIdentity, StartInput } from "./types.ts";
import { SsoFailure, SsoRefusal } from "./types.ts";

export const IDP_A_ISSUER = "https://accounts.google.com";
const DIRECTORY = "https://admin.googleapis.com/admin/directory/v1";
const GROUP_SCOPE = "https://www.googleapis.com/auth/admin.directory.group.readonly";
const MAX_PAGES = 20;

interface ServiceAccount {
  client_email: string;
  private_key: string;
  token_uri: string;
}

function readServiceAccount(path: string): ServiceAccount {
  const text = readConfiguredFile("serviceAccountFilePath", path);
  let parsed: Partial<ServiceAccount>;
  try {
    parsed = JSON.parse(text) as Partial<ServiceAccount>;
  } catch {
    throw new Error(`serviceAccountFilePath ${path} is not JSON`);
  }
  for (const field of ["client_email", "private_key", "token_uri"] as const) {
    if (typeof parsed[field] !== "string" || !parsed[field]) {
      throw new Error(`serviceAccountFilePath ${path} has no ${field}`);
    }
  }
  return parsed as ServiceAccount;
}

export class IdpAConnector extends ConfiguredConnector {
  readonly kind = "idpA";
  private readonly client: OidcClient;
  private readonly domains: string[];
  private readonly serviceAccount?: ServiceAccount;

  constructor(id: string, config: Record<string, unknown>) {
    super(id, config, new ProviderHttp("identity provider"));
    this.domains = configStrings(config, "hostedDomains");
    const file = configString(config, "serviceAccountFilePath");
    this.serviceAccount = file ? readServiceAccount(file) : undefined;
    this.client = new OidcClient({
      issuer: IDP_A_ISSUER,
      clientId: configString(config, "clientId") ?? "",
      clientSecret: configString(config, "clientSecret"),
      scopes: oidcScopes(configStrings(config, "scopes"), ["profile", "email"]),
      http: this.http,
      // One domain: the provider preselects it; several: "*" asks for any hosted domain.
      authorizeParams: this.domains.length > 0 ? { hd: this.domains.length === 1 ? this.domains[0] : "*" } : undefined,
    });
  }

  async start(input: StartInput): Promise<LoginStart> {
    const { url, state } = await this.client.authorizationUrl(input.state, input.callbackUrl);
    return { type: "redirect", url, state };
  }

  async finish(input: CallbackInput): Promise<SsoIdentity> {
    const { claims } = await this.client.finish(input.params, input.state, input.callbackUrl);
    const record = claims as Record<string, unknown>;
    if (this.domains.length > 0) {
      const hd = claimString(record, "hd");
      if (!hd || !this.domains.includes(hd)) {
        throw new SsoRefusal(
          "hostedDomains",
          `your account${hd ? ` of ${hd}` : ""} is not in an allowed domain (idpA hostedDomains: ${this.domains.join(", ")})`,
        );
      }
    }
    const email = claimString(record, "email");
    const required = configStrings(this.config, "groups");
    let groups: string[] = [];
    if (required.length > 0) {
      if (!this.serviceAccount)
        throw new SsoFailure("idpA groups need serviceAccountFilePath and adminEmail to be read");
      if (!email) throw new SsoFailure("the ID token has no email to look the groups up with");
      groups = (await this.directoryGroups(email)).filter((group) => required.includes(group));
      if (groups.length === 0) {
        throw notInGroups("idpA groups", required);
      }
    }
    return {
      userId: String(claims.sub),
      username: email ?? String(claims.sub),
      preferredUsername: email,
      email,
      emailVerified: email !== undefined && record.email_verified === true,
      displayName: claimString(record, "name"),
      groups,
    };
  }

  /** The group e-mail addresses of a user, through the service account impersonating adminEmail. */
  private async directoryGroups(email: string): Promise<string[]> {
    const account = this.serviceAccount!;
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ scope: GROUP_SCOPE })
      .setProtectedHeader({ alg: "RS256", typ: "JWT" })
      .setIssuer(account.client_email)
      .setSubject(configString(this.config, "adminEmail") ?? "")
      .setAudience(account.token_uri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(await importPKCS8(account.private_key, "RS256"));
    const token = await this.http.json<{ access_token?: unknown }>(account.token_uri, {
      form: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion },
    });
    if (typeof token.access_token !== "string") throw new SsoFailure("the service account grant gave no access_token");
    const groups: string[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const url = new URL(providerUrl(`${DIRECTORY}/groups`));
      url.searchParams.set("userKey", email);
      if (pageToken) url.searchParams.set("pageToken", pageToken);
      const answer = await this.http.json<{ groups?: { email?: string }[]; nextPageToken?: string }>(url.toString(), {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      for (const group of answer.groups ?? []) if (typeof group.email === "string") groups.push(group.email);
      pageToken = answer.nextPageToken;
      if (!pageToken) break;
    }
    return groups;
  }
}
