// Local HTTPS stand-ins for the code hosts and identity providers, answering the documented endpoints the way the
// real ones do (as Dex's own tests fake them): codeHostA (GitHub-shaped, enterprise layout under /api/v3),
// codeHostB (GitLab-shaped), idpA (Google-shaped OpenID provider plus the Admin Directory API and the
// service-account JWT grant), idpB (Microsoft-shaped login with tenants, an ID token with oid and tid, and Graph).
// Each authorizes `next` at once (no login page) and checks the client secret, the code and the redirect URI like
// the real token endpoints.

import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { importPKCS8, importSPKI, jwtVerify, SignJWT } from "jose";
import type { TestTls } from "./test-ca.ts";

export const CLIENT_ID = "platform-client";
export const CLIENT_SECRET = "fake-provider-client-s3cret";

interface Grant {
  person: string;
  redirectUri: string;
  nonce?: string;
}

type Handler = (request: IncomingMessage, url: URL, body: string, response: ServerResponse) => unknown;

export interface FakeProvider<P> {
  origin: string;
  /** People by login name; `next` is who the authorize endpoint logs in. */
  people: Map<string, P>;
  next: string;
  /** What each request asked for, for assertions (path and query). */
  requests: { method: string; path: string; query: URLSearchParams; body: string }[];
  close(): Promise<void>;
}

const json = (response: ServerResponse, status: number, body: unknown): void => {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};

async function serve<P>(
  tls: TestTls,
  route: (fake: FakeProvider<P>, grants: OAuth) => Handler,
): Promise<FakeProvider<P>> {
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const fake: FakeProvider<P> = {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    people: new Map(),
    next: "",
    requests: [],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const handler = route(fake, new OAuth(fake as FakeProvider<unknown>));
  server.on("request", (request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", async () => {
      const url = new URL(request.url ?? "/", fake.origin);
      fake.requests.push({ method: request.method ?? "", path: url.pathname, query: url.searchParams, body });
      try {
        await handler(request, url, body, response);
      } catch (error) {
        json(response, 500, { error: "server_error", detail: String(error) });
      }
    });
  });
  return fake;
}

/** Codes and tokens of an OAuth 2.0 authorization server. */
class OAuth {
  private readonly codes = new Map<string, Grant>();
  readonly tokens = new Map<string, string>();
  private readonly fake: FakeProvider<unknown>;

  constructor(fake: FakeProvider<unknown>) {
    this.fake = fake;
  }

  authorize(url: URL, response: ServerResponse): void {
    const redirect = url.searchParams.get("redirect_uri");
    if (url.searchParams.get("client_id") !== CLIENT_ID || !redirect) {
      json(response, 400, { error: "invalid_request" });
      return;
    }
    const code = randomBytes(12).toString("hex");
    this.codes.set(code, {
      person: this.fake.next,
      redirectUri: redirect,
      nonce: url.searchParams.get("nonce") ?? undefined,
    });
    const back = new URL(redirect);
    back.searchParams.set("code", code);
    back.searchParams.set("state", url.searchParams.get("state") ?? "");
    response.writeHead(302, { location: back.toString() }).end();
  }

  /** The grant of a valid token request, or an OAuth error answer (undefined). */
  exchange(body: string, response: ServerResponse): (Grant & { token: string }) | undefined {
    const form = new URLSearchParams(body);
    const grant = this.codes.get(form.get("code") ?? "");
    if (form.get("client_id") !== CLIENT_ID || form.get("client_secret") !== CLIENT_SECRET) {
      json(response, 401, { error: "invalid_client" });
      return undefined;
    }
    if (!grant || grant.redirectUri !== form.get("redirect_uri")) {
      json(response, 400, { error: "invalid_grant" });
      return undefined;
    }
    this.codes.delete(form.get("code") ?? "");
    const token = randomBytes(16).toString("hex");
    this.tokens.set(token, grant.person);
    return { ...grant, token };
  }

  /** The person behind the request's bearer token. */
  person(request: IncomingMessage): string | undefined {
    const token = /^(Bearer|token) (\S+)$/.exec(String(request.headers.authorization ?? ""))?.[2];
    return token ? this.tokens.get(token) : undefined;
  }
}

// ---- codeHostA ----------------------------------------------------------------------------------------------

export interface CodeHostAPerson {
  id: number;
  name?: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
  orgs: string[];
  teams: { name: string; slug: string; org: string }[];
}

export function startCodeHostA(tls: TestTls): Promise<FakeProvider<CodeHostAPerson>> {
  return serve<CodeHostAPerson>(tls, (fake, oauth) => (request, url, body, response) => {
    if (url.pathname === "/login/oauth/authorize") return oauth.authorize(url, response);
    if (url.pathname === "/login/oauth/access_token" && request.method === "POST") {
      const grant = oauth.exchange(body, response);
      if (!grant) return;
      // Like the real one: form-encoded unless JSON is asked for.
      if (/json/.test(String(request.headers.accept)))
        return json(response, 200, { access_token: grant.token, token_type: "bearer" });
      response
        .writeHead(200, { "content-type": "application/x-www-form-urlencoded" })
        .end(`access_token=${grant.token}&token_type=bearer`);
      return;
    }
    const login = oauth.person(request);
    const person = login ? fake.people.get(login) : undefined;
    if (!login || !person) return json(response, 401, { message: "Bad credentials" });
    const page = Number(url.searchParams.get("page") ?? 1);
    const paged = <T>(items: T[]) => (page === 1 ? items : []);
    switch (url.pathname) {
      case "/api/v3/user":
        return json(response, 200, { id: person.id, login, name: person.name ?? null });
      case "/api/v3/user/emails":
        return json(response, 200, person.emails);
      case "/api/v3/user/orgs":
        return json(response, 200, paged(person.orgs.map((org) => ({ login: org }))));
      case "/api/v3/user/teams":
        return json(
          response,
          200,
          paged(person.teams.map((t) => ({ name: t.name, slug: t.slug, organization: { login: t.org } }))),
        );
      default:
        return json(response, 404, { message: "Not Found" });
    }
  });
}

// ---- codeHostB ----------------------------------------------------------------------------------------------

export interface CodeHostBPerson {
  id: number;
  name?: string;
  email?: string;
  /** What /oauth/userinfo says of the e-mail (default true, as for a confirmed address). */
  emailVerified?: boolean;
  groups: string[];
}

export function startCodeHostB(tls: TestTls): Promise<FakeProvider<CodeHostBPerson>> {
  return serve<CodeHostBPerson>(tls, (fake, oauth) => (request, url, body, response) => {
    if (url.pathname === "/oauth/authorize") return oauth.authorize(url, response);
    if (url.pathname === "/oauth/token" && request.method === "POST") {
      const grant = oauth.exchange(body, response);
      if (grant) json(response, 200, { access_token: grant.token, token_type: "Bearer" });
      return;
    }
    const login = oauth.person(request);
    const person = login ? fake.people.get(login) : undefined;
    if (!login || !person) return json(response, 401, { message: "401 Unauthorized" });
    if (url.pathname === "/api/v4/user")
      return json(response, 200, { id: person.id, username: login, name: person.name, email: person.email });
    if (url.pathname === "/oauth/userinfo")
      return json(response, 200, {
        sub: String(person.id),
        groups: person.groups,
        ...(person.email ? { email: person.email, email_verified: person.emailVerified ?? true } : {}),
      });
    return json(response, 404, { message: "404 Not Found" });
  });
}

// ---- idpA ---------------------------------------------------------------------------------------------------

export interface IdpAPerson {
  sub: string;
  email: string;
  hd?: string;
  groups: string[];
}

export interface IdpAFake extends FakeProvider<IdpAPerson> {
  /** A service account file (JSON) whose token_uri is this fake. */
  serviceAccountJson: string;
  adminEmail: string;
}

export async function startIdpA(tls: TestTls): Promise<IdpAFake> {
  const signing = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const signingKey = await importPKCS8(signing.privateKey.export({ type: "pkcs8", format: "pem" }) as string, "RS256");
  const jwk = { ...signing.publicKey.export({ format: "jwk" }), kid: "fake-1", alg: "RS256", use: "sig" };
  const account = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const accountPublic = await importSPKI(account.publicKey.export({ type: "spki", format: "pem" }) as string, "RS256");
  const adminEmail = "admin@example.com";
  const directoryTokens = new Set<string>();
  const fake = (await serve<IdpAPerson>(tls, (self, oauth) => async (request, url, body, response) => {
    const issuer = "https://accounts.google.com";
    switch (url.pathname) {
      case "/.well-known/openid-configuration":
        return json(response, 200, {
          issuer,
          authorization_endpoint: `${self.origin}/o/oauth2/v2/auth`,
          token_endpoint: `${self.origin}/token`,
          jwks_uri: `${self.origin}/oauth2/v3/certs`,
          userinfo_endpoint: `${self.origin}/v1/userinfo`,
        });
      case "/oauth2/v3/certs":
        return json(response, 200, { keys: [jwk] });
      case "/o/oauth2/v2/auth":
        return oauth.authorize(url, response);
      case "/token": {
        const form = new URLSearchParams(body);
        if (form.get("grant_type") === "urn:ietf:params:oauth:grant-type:jwt-bearer") {
          const { payload } = await jwtVerify(form.get("assertion") ?? "", accountPublic, {
            audience: `${self.origin}/token`,
          });
          if (payload.sub !== adminEmail || !String(payload.scope).includes("admin.directory.group.readonly")) {
            return json(response, 400, { error: "unauthorized_client" });
          }
          const token = randomBytes(16).toString("hex");
          directoryTokens.add(token);
          return json(response, 200, { access_token: token, token_type: "Bearer", expires_in: 3600 });
        }
        const grant = oauth.exchange(body, response);
        if (!grant) return;
        const person = self.people.get(grant.person)!;
        const now = Math.floor(Date.now() / 1000);
        const idToken = await new SignJWT({
          email: person.email,
          email_verified: true,
          ...(person.hd ? { hd: person.hd } : {}),
          nonce: grant.nonce,
        })
          .setProtectedHeader({ alg: "RS256", kid: "fake-1" })
          .setIssuer(issuer)
          .setAudience(CLIENT_ID)
          .setSubject(person.sub)
          .setIssuedAt(now)
          .setExpirationTime(now + 600)
          .sign(signingKey);
        return json(response, 200, { access_token: grant.token, id_token: idToken, token_type: "Bearer" });
      }
      case "/admin/directory/v1/groups": {
        const token = /^Bearer (\S+)$/.exec(String(request.headers.authorization ?? ""))?.[1];
        if (!token || !directoryTokens.has(token)) return json(response, 401, { error: { code: 401 } });
        const person = [...self.people.values()].find((p) => p.email === url.searchParams.get("userKey"));
        const groups = (person?.groups ?? []).map((email) => ({ email }));
        // Two pages, like a real directory with many groups.
        if (!url.searchParams.get("pageToken"))
          return json(response, 200, {
            groups: groups.slice(0, 1),
            nextPageToken: groups.length > 1 ? "p2" : undefined,
          });
        return json(response, 200, { groups: groups.slice(1) });
      }
      default:
        return json(response, 404, { error: "not found" });
    }
  })) as IdpAFake;
  fake.adminEmail = adminEmail;
  fake.serviceAccountJson = JSON.stringify({
    type: "service_account",
    client_email: "platform@project.iam.example.com",
    private_key: account.privateKey.export({ type: "pkcs8", format: "pem" }),
    token_uri: `${fake.origin}/token`,
  });
  return fake;
}

// ---- idpB ---------------------------------------------------------------------------------------------------

/** The organisation tenant of the idpB fake: its name (what a config's `tenant` may say) and its id. */
export const IDP_B_TENANT = { name: "corp-tenant", id: "6f2b3c1e-0a4d-4e8b-9c11-2d3e4f5a6b7c" };
const IDP_B_SHARED = new Set(["common", "organizations", "consumers"]);
const IDP_B_LOGIN = "https://login.microsoftonline.com";

export interface IdpBPerson {
  /** The object id (oid): immutable, unique within its tenant. */
  id: string;
  /** The person's tenant id (default: IDP_B_TENANT's). */
  tid?: string;
  displayName: string;
  /** Graph's `mail`, which any tenant's admin can set to anything (default: the userPrincipalName). */
  mail?: string;
  groups: { id: string; displayName: string; security: boolean }[];
}

/**
 * Microsoft-shaped: authorize and token per tenant (common, organizations and consumers take any tenant's people;
 * a tenant by name or id only its own), the v2.0 discovery document (issuer templated with {tenantid} for the
 * shared tenants) and its keys, an ID token with oid, tid and the nonce, and Graph /me with `mail`.
 */
export async function startIdpB(tls: TestTls): Promise<FakeProvider<IdpBPerson>> {
  const signing = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const signingKey = await importPKCS8(signing.privateKey.export({ type: "pkcs8", format: "pem" }) as string, "RS256");
  const jwk = { ...signing.publicKey.export({ format: "jwk" }), kid: "idpb-1", alg: "RS256", use: "sig" };
  const tenantId = (tenant: string) => (tenant === IDP_B_TENANT.name ? IDP_B_TENANT.id : tenant);
  return serve<IdpBPerson>(tls, (fake, oauth) => async (request, url, body, response) => {
    const tenant = /^\/([^/]+)\//.exec(url.pathname)?.[1] ?? "";
    if (url.pathname === `/${tenant}/v2.0/.well-known/openid-configuration`) {
      const issuerTenant = IDP_B_SHARED.has(tenant) ? "{tenantid}" : tenantId(tenant);
      return json(response, 200, {
        issuer: `${IDP_B_LOGIN}/${issuerTenant}/v2.0`,
        authorization_endpoint: `${IDP_B_LOGIN}/${tenant}/oauth2/v2.0/authorize`,
        token_endpoint: `${IDP_B_LOGIN}/${tenant}/oauth2/v2.0/token`,
        jwks_uri: `${IDP_B_LOGIN}/${tenant}/discovery/v2.0/keys`,
      });
    }
    if (url.pathname === `/${tenant}/discovery/v2.0/keys`) return json(response, 200, { keys: [jwk] });
    if (url.pathname === `/${tenant}/oauth2/v2.0/authorize`) return oauth.authorize(url, response);
    if (url.pathname === `/${tenant}/oauth2/v2.0/token` && request.method === "POST") {
      const grant = oauth.exchange(body, response);
      if (!grant) return;
      const person = fake.people.get(grant.person)!;
      const tid = person.tid ?? IDP_B_TENANT.id;
      if (!IDP_B_SHARED.has(tenant) && tenantId(tenant) !== tid) return json(response, 400, { error: "invalid_grant" });
      const now = Math.floor(Date.now() / 1000);
      const idToken = await new SignJWT({
        oid: person.id,
        tid,
        preferred_username: grant.person,
        name: person.displayName,
        ver: "2.0",
        ...(grant.nonce ? { nonce: grant.nonce } : {}),
      })
        .setProtectedHeader({ alg: "RS256", kid: "idpb-1" })
        .setIssuer(`${IDP_B_LOGIN}/${tid}/v2.0`)
        .setAudience(CLIENT_ID)
        .setSubject(`pairwise-${person.id}`)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(signingKey);
      return json(response, 200, { access_token: grant.token, id_token: idToken, token_type: "Bearer" });
    }
    const upn = oauth.person(request);
    const person = upn ? fake.people.get(upn) : undefined;
    if (!upn || !person) return json(response, 401, { error: { code: "InvalidAuthenticationToken" } });
    if (url.pathname === "/v1.0/me")
      return json(response, 200, {
        id: person.id,
        displayName: person.displayName,
        userPrincipalName: upn,
        mail: person.mail ?? upn,
      });
    if (url.pathname === "/v1.0/me/getMemberGroups" && request.method === "POST") {
      const securityOnly = JSON.parse(body).securityEnabledOnly === true;
      return json(response, 200, { value: person.groups.filter((g) => !securityOnly || g.security).map((g) => g.id) });
    }
    if (url.pathname === "/v1.0/directoryObjects/getByIds" && request.method === "POST") {
      const ids: string[] = JSON.parse(body).ids;
      return json(response, 200, {
        value: person.groups.filter((g) => ids.includes(g.id)).map((g) => ({ id: g.id, displayName: g.displayName })),
      });
    }
    return json(response, 404, { error: { code: "NotFound" } });
  });
}
