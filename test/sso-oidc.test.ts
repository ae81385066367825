// Single sign-on with a real OpenID provider (oidc-provider on loopback HTTPS) against the real platform, driven
// by a browser with a cookie jar: discovery, PKCE, ID token verification, userinfo, group claims, required groups,
// user and team creation, the Login key as a bearer token and as a cookie, logout (with RP-initiated logout), the
// return path, the browser binding, user creation off, a disabled user, password login off, and Config changes
// taking effect without a restart.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import * as client from "openid-client";
import { AuthClient } from "./support/auth-client.ts";
import { formsOf, type Page, TestBrowser } from "./support/browser.ts";
import { capture, send } from "./support/https-json.ts";
import { OidcRelyingParties } from "./support/oidc-relying-party.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "./support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { adminGet, cookieValue, keyWorks, setPlatformConfig, tempFile } from "./support/sso-platform.ts";

describe("OIDC login", () => {
  let platform: PlatformProcess;
  let provider: OidcTestProvider;
  let caFile: string;
  let logs: () => string;
  /** Every Login key the tests saw, and the provider's client secret: none may appear in a log. */
  const secrets: string[] = [];

  const oidcConfig = (extra = "", auth = "") => `audit: {enabled: true, level: 3, path: audit.log}
auth:
  oidc:
${oidcBlockYaml(provider, {
  callbackUrl: `${platform.url}/auth/oidc/callback`,
  caFile,
  indent: "    ",
  extra: [
    `postLogoutRedirectURI: ${platform.url}/auth/info`,
    "scopes: [openid, email, profile, groups, department]",
    "getUserInfo: true",
    "allowedExtraClaims: [department]",
  ],
})}${extra}${auth}`;

  const browser = () => new TestBrowser([platform.caPem, provider.tls.caPem]);

  /** Logs in through the provider's forms; answers the platform's final page. */
  async function login(b: TestBrowser, account: string, start = `${platform.url}/auth/oidc/login`): Promise<Page> {
    let page = await b.navigate(start);
    assert.equal(page.status, 200, `login form expected: ${page.body.slice(0, 300)}`);
    page = await b.submit(page, { login: account, password: "anything" });
    // The consent prompt (first login of the account with this client).
    if (page.url.startsWith(provider.issuer) && formsOf(page).length > 0) page = await b.submit(page);
    return page;
  }

  before(async () => {
    platform = await startPlatformProcess();
    logs = capture(platform.child.stderr);
    provider = await startOidcTestProvider({
      redirectUris: [`${platform.url}/auth/oidc/callback`, `${platform.url}/auth/corp/callback`],
      postLogoutRedirectUris: [`${platform.url}/auth/info`],
    });
    caFile = await tempFile("provider-ca.pem", provider.tls.caPem);
    provider.accounts.set("alice", {
      email: "alice@example.com",
      email_verified: true,
      name: "Alice Example",
      preferred_username: "alice",
      groups: ["dev", "ops"],
      userinfoOnly: { department: "engineering" },
    });
    provider.accounts.set("bob", { email: "bob@example.com", preferred_username: "bob", groups: ["guests"] });
    provider.accounts.set("carol", { email: "carol@example.com", preferred_username: "carol", groups: ["dev"] });
    await setPlatformConfig(platform, oidcConfig());
  });
  after(async () => {
    await platform?.stop();
    await provider?.close();
  });

  it("GET /auth/info lists password login and the OIDC connector", async () => {
    const reply = await send(platform, "GET", "/auth/info");
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.json(), {
      password: { enabled: true },
      connectors: [{ id: "oidc", displayName: "OpenID Connect", type: "oidc", loginPath: "/auth/oidc/login" }],
    });
  });

  it("a full login creates the user and its teams and issues a Login key as a secure cookie", async () => {
    const b = browser();
    const start = await b.fetch(`${platform.url}/auth/oidc/login`);
    assert.equal(start.status, 302);
    const authorize = new URL(String(start.headers.location));
    assert.equal(authorize.origin, provider.issuer);
    assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
    assert.ok(authorize.searchParams.get("nonce"));
    assert.equal(authorize.searchParams.get("redirect_uri"), `${platform.url}/auth/oidc/callback`);

    const page = await login(b, "alice");
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /logged in to the platform as alice/);
    const raw = (await b.jar.getCookies(`${platform.url}/`)).find((c) => c.key === "vcp_session");
    assert.equal(raw?.httpOnly, true);
    assert.equal(raw?.secure, true);
    assert.equal(String(raw?.sameSite).toLowerCase(), "lax");

    const user = await adminGet(platform, "users/alice");
    assert.equal(user.status, 200);
    assert.equal(user.json.spec.username, "alice");
    // The subject links the account to (connector, provider subject) only.
    assert.equal(user.json.spec.subject, "sso:oidc:alice");
    assert.equal(user.json.spec.verifiedEmail, "alice@example.com");
    assert.equal(user.json.spec.email, "alice@example.com");
    assert.deepEqual(user.json.spec.ssoGroups, ["dev", "ops"]);
    for (const team of ["dev", "ops"]) {
      const got = await adminGet(platform, `teams/${team}`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.json.spec.users, ["alice"]);
      assert.equal(got.json.metadata.annotations["management.platform.sh/sso-group"], team);
    }

    const key = await cookieValue(b.jar, `${platform.url}/`, "vcp_session");
    assert.ok(key);
    secrets.push(key);
    assert.equal(await keyWorks(platform, key, "alice"), 200);
    const keys = await adminGet(platform, "ownedaccesskeys");
    const loginKey = keys.json.items.find(
      (k: { spec: { user: string; type: string } }) => k.spec.user === "alice" && k.spec.type === "Login",
    );
    assert.deepEqual(loginKey.spec.identity, {
      userId: "alice",
      username: "alice",
      preferredUsername: "alice",
      email: "alice@example.com",
      emailVerified: true,
      extraClaims: { department: ["engineering"] },
      groups: ["dev", "ops"],
      connector: "oidc",
    });
    assert.doesNotMatch(JSON.stringify(loginKey), /eyJ/, "no provider token is stored");

    // Logout (the button of the logout page): the key dies, the cookie is cleared, and the browser goes on to the
    // provider's end-session page.
    const logoutPage = await b.navigate(`${platform.url}/auth/logout`);
    assert.equal(logoutPage.status, 200);
    assert.ok(await cookieValue(b.jar, `${platform.url}/`, "vcp_session"), "showing the page changed nothing");
    const out = await b.fetch(`${platform.url}/auth/logout`, { method: "POST", headers: { origin: platform.url } });
    assert.equal(out.status, 303);
    const endSession = new URL(String(out.headers.location));
    assert.equal(endSession.origin, provider.issuer);
    assert.equal(endSession.searchParams.get("post_logout_redirect_uri"), `${platform.url}/auth/info`);
    assert.equal(await cookieValue(b.jar, `${platform.url}/`, "vcp_session"), undefined);
    assert.equal(await keyWorks(platform, key, "alice"), 401);
  });

  it("the next login keeps memberships in step with the provider's groups", async () => {
    provider.accounts.get("alice")!.groups = ["ops", "sre"];
    const page = await login(browser(), "alice");
    assert.equal(page.status, 200, page.body);
    assert.deepEqual((await adminGet(platform, "users/alice")).json.spec.ssoGroups, ["ops", "sre"]);
    assert.deepEqual((await adminGet(platform, "teams/dev")).json.spec.users, []);
    assert.deepEqual((await adminGet(platform, "teams/sre")).json.spec.users, ["alice"]);
  });

  it("allowedExtraClaims and the verified e-mail reach the platform's own ID tokens and userinfo", async () => {
    const wiki = { id: "wiki", secret: "wiki-client-s3cret", redirect: "https://wiki.example.test/cb" };
    secrets.push(wiki.secret);
    await setPlatformConfig(
      platform,
      `${oidcConfig()}oidc:\n  clients:\n  - {name: Wiki, clientId: ${wiki.id}, clientSecret: ${wiki.secret}, redirectURIs: ['${wiki.redirect}']}\n`,
    );
    const b = browser();
    assert.equal((await login(b, "alice")).status, 200);
    const api = new AuthClient(platform.url, platform.caPem);
    try {
      const rps = new OidcRelyingParties(platform, api);
      const rp = await rps.relyingParty(wiki.id, wiki.secret);
      const tokens = await rps.codeFlow(b, rp, wiki.redirect);
      secrets.push(tokens.access_token, tokens.id_token ?? "", tokens.refresh_token ?? "");
      const info = await client.fetchUserInfo(rp, tokens.access_token, tokens.claims()?.sub ?? "");
      for (const claims of [tokens.claims() ?? {}, info] as Record<string, unknown>[]) {
        assert.deepEqual(claims.department, ["engineering"]);
        assert.equal(claims.email, "alice@example.com");
        assert.equal(claims.email_verified, true);
      }
    } finally {
      api.close();
    }
    await setPlatformConfig(platform, oidcConfig());
  });

  it("required groups refuse a user outside them with a 403 page naming the rule", async () => {
    await setPlatformConfig(platform, oidcConfig("    groups: [dev, ops]\n"));
    const page = await login(browser(), "bob");
    assert.equal(page.status, 403);
    assert.match(page.headers["content-type"] as string, /text\/html/);
    assert.match(page.body, /Access denied/);
    assert.match(page.body, /oidc groups: dev, ops/);
    assert.equal((await adminGet(platform, "users/bob")).status, 404);
  });

  it("groupsFilters keep only matching groups; disableTeamCreation creates no team", async () => {
    await setPlatformConfig(platform, oidcConfig("", "  groupsFilters: ['^de']\n  disableTeamCreation: true\n"));
    provider.accounts.get("carol")!.groups = ["dev", "finance"];
    const page = await login(browser(), "carol");
    assert.equal(page.status, 200, page.body);
    assert.deepEqual((await adminGet(platform, "users/carol")).json.spec.ssoGroups, ["dev"]);
    // dev exists (alice's login made it): carol joins it; finance is filtered out and never created.
    assert.deepEqual((await adminGet(platform, "teams/dev")).json.spec.users, ["carol"]);
    assert.equal((await adminGet(platform, "teams/finance")).status, 404);
  });

  it("disableUserCreation refuses an unknown person with a page that says why", async () => {
    await setPlatformConfig(platform, oidcConfig("", "  disableUserCreation: true\n"));
    provider.accounts.set("dave", { email: "dave@example.com", preferred_username: "dave" });
    const page = await login(browser(), "dave");
    assert.equal(page.status, 403);
    assert.match(page.body, /does not create users here \(auth.disableUserCreation\)/);
    assert.equal((await adminGet(platform, "users/dave")).status, 404);
    // A known user still logs in.
    assert.equal((await login(browser(), "alice")).status, 200);
  });

  it("a disabled user is refused", async () => {
    await setPlatformConfig(platform, oidcConfig());
    const patched = await send(platform, "PATCH", "/apis/management.platform.sh/v1/users/carol", {
      token: platform.adminKey,
      body: { spec: { disabled: true } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(patched.status, 200);
    const page = await login(browser(), "carol");
    assert.equal(page.status, 403);
    assert.match(page.body, /user carol is disabled/);
  });

  it("a return path of this platform is where the login ends; any other target is refused", async () => {
    const b = browser();
    const page = await login(
      b,
      "alice",
      `${platform.url}/auth/oidc/login?return=${encodeURIComponent("/auth/info?x=1")}`,
    );
    assert.equal(page.url, `${platform.url}/auth/info?x=1`);
    for (const target of [
      "https://evil.example.com/",
      "//evil.example.com/",
      "/\\evil.example.com",
      "javascript:alert(1)",
    ]) {
      const reply = await send(platform, "GET", `/auth/oidc/login?return=${encodeURIComponent(target)}`);
      assert.equal(reply.status, 400, target);
      assert.match(reply.json().message, /relative path of this platform/);
    }
  });

  it("a callback with an unknown state, or from another browser, is refused", async () => {
    const unknown = await send(platform, "GET", "/auth/oidc/callback?state=nope&code=x");
    assert.equal(unknown.status, 400);
    assert.match(unknown.json().message, /unknown, has expired/);

    // Start in one browser, finish in another: the login's sealed cookie is missing there.
    const b = browser();
    let page = await b.navigate(`${platform.url}/auth/oidc/login`);
    page = await b.submit(page, { login: "alice", password: "x" });
    if (formsOf(page).length > 0 && page.url.startsWith(provider.issuer)) {
      const form = formsOf(page)[0];
      const consent = await b.fetch(form.action, { form: form.fields });
      page = { ...consent, trail: [] };
    }
    // Follow the provider's redirects without reaching the platform.
    let location = String(page.headers.location ?? "");
    while (location && !location.startsWith(platform.url)) {
      const next = await b.fetch(new URL(location, provider.issuer).toString());
      location = String(next.headers.location ?? "");
    }
    assert.ok(location.startsWith(`${platform.url}/auth/oidc/callback`), location);
    const other = await browser().navigate(location);
    assert.equal(other.status, 400);
    assert.match(other.body, /started in another browser/);
  });

  it("password.disabled turns the password endpoint off and /auth/info says so", async () => {
    await setPlatformConfig(platform, oidcConfig("", "  password: {disabled: true}\n"));
    const info = (await send(platform, "GET", "/auth/info")).json();
    assert.deepEqual(info.password, { enabled: false });
    const reply = await send(platform, "POST", "/auth/password/login", {
      body: { username: "admin", password: "whatever" },
    });
    assert.equal(reply.status, 403);
    assert.match(reply.json().message, /password login is disabled/);
  });

  it("connectors come and go with the Config, without a restart", async () => {
    await setPlatformConfig(
      platform,
      `auth:
  connectors:
  - id: corp
    displayName: Corporate login
    oidc:
${oidcBlockYaml(provider, {
  callbackUrl: `${platform.url}/auth/corp/callback`,
  caFile,
  indent: "      ",
  extra: ["scopes: [openid, email, profile, groups]"],
})}`,
    );
    const info = (await send(platform, "GET", "/auth/info")).json();
    assert.deepEqual(info.connectors, [
      { id: "corp", displayName: "Corporate login", type: "oidc", loginPath: "/auth/corp/login" },
    ]);
    assert.equal((await send(platform, "GET", "/auth/oidc/login")).status, 404);
    const page = await login(browser(), "alice", `${platform.url}/auth/corp/login`);
    assert.equal(page.status, 200, page.body);
    const keys = await adminGet(platform, "ownedaccesskeys");
    assert.ok(
      keys.json.items.some(
        (k: { spec: { identity?: { connector?: string } } }) => k.spec.identity?.connector === "corp",
      ),
    );
  });

  it("customHttpHeaders are set on the authentication endpoints", async () => {
    await setPlatformConfig(platform, oidcConfig("", "  customHttpHeaders: {X-Frame-Options: DENY}\n"));
    for (const path of ["/auth/info", "/auth/oidc/login", "/auth/oidc/callback?state=x", "/auth/logout"]) {
      const reply = await send(platform, "GET", path);
      assert.equal(reply.headers["x-frame-options"], "DENY", path);
    }
  });

  it("no key, client secret, authorization code or state reaches the log or the audit log", async () => {
    secrets.push(provider.clientSecret);
    const audit = await readFile(`${platform.dataDir}/audit/audit.log`, "utf8");
    assert.match(audit, /"requestURI":"\/auth\/oidc\/callback\?code=%3Credacted%3E&state=%3Credacted%3E/);
    for (const text of [logs(), audit]) {
      for (const secret of secrets) assert.ok(!text.includes(secret), "a secret was logged");
      assert.doesNotMatch(text, /[?&](code|state)=(?!%3Credacted%3E)[^&"]+/);
      assert.doesNotMatch(text, /eyJ[\w-]+\.eyJ/, "no JWT");
    }
  });
});
