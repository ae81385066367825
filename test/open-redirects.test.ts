// No redirect leaves the platform (issue 29 item 4), over HTTPS against the real platform: every known open-redirect
// payload as the return path of a single sign-on login is refused before the provider is involved (or kept as a path
// of the platform), a login whose return path was one never ends elsewhere, and the platform's OpenID provider sends
// no browser to a redirect or post-logout address its client did not register, however it is written.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { safeReturnPath } from "../src/utils/safe-return-path.ts";
import { openRedirectPayloads } from "../src/utils/testing-open-redirects.ts";
import { AuthClient } from "./support/auth-client.ts";
import { formsOf, TestBrowser } from "./support/browser.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "./support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { setPlatformConfig, tempFile } from "./support/sso-platform.ts";

const WIKI = { id: "wiki", secret: "wiki-client-s3cret-44ab", redirect: "https://wiki.example.test/oauth" };
const TEAMS = "https://*.teams.example.test/cb";

/** Absolute addresses that try to pass for a registered one (exact, or under a wildcard) and lead elsewhere. */
const ABSOLUTE_PAYLOADS = [
  "https://evil.example.com/oauth",
  "https://wiki.example.test.evil.example.com/oauth",
  "https://wiki.example.test@evil.example.com/oauth",
  "https://evil.example.com\\@wiki.example.test/oauth",
  "https://evil.example.com/.wiki.example.test/oauth",
  "https://evil.example.com#wiki.example.test/oauth",
  "https://wiki.example.test/oauth/..//evil.example.com",
  "https://wiki.example.test/oauth\t",
  "https://wiki.exa\tmple.test/oauth",
  "HTTPS://WIKI.EXAMPLE.TEST/oauth",
  "//wiki.example.test/oauth",
  "https://a.b.teams.example.test/cb",
  "https://evil.example.com/.teams.example.test/cb",
  "https://a.teams.example.test\\@evil.example.com/cb",
  "https://a.teams.example.test%2f@evil.example.com/cb",
  "https://a.teams.example.test.evil.example.com/cb",
  // What a browser would read differs from what is written (tabs and backslashes dropped or turned into "/").
  "https://a.teams.exa\tmple.test/cb",
  "https://a.teams.example.test\\cb",
  "javascript://a.teams.example.test/cb%0aalert(1)",
  ...openRedirectPayloads(),
];

describe("redirects never leave the platform", () => {
  let platform: PlatformProcess;
  let provider: OidcTestProvider;
  let client: AuthClient;

  before(async () => {
    platform = await startPlatformProcess();
    client = new AuthClient(platform.url, platform.caPem);
    provider = await startOidcTestProvider({ redirectUris: [`${platform.url}/auth/oidc/callback`] });
    provider.accounts.set("olga", { email: "olga@example.com", preferred_username: "olga" });
    const caFile = await tempFile("provider-ca.pem", provider.tls.caPem);
    await setPlatformConfig(
      platform,
      `oidc:
  wildcardRedirect: true
  clients:
  - name: Wiki
    clientId: ${WIKI.id}
    clientSecret: ${WIKI.secret}
    redirectURIs: [${WIKI.redirect}, "${TEAMS}"]
auth:
  oidc:
${oidcBlockYaml(provider, { callbackUrl: `${platform.url}/auth/oidc/callback`, caFile, indent: "    " })}`,
    );
  });
  after(async () => {
    client?.close();
    await platform?.stop();
    await provider?.close();
  });

  it("a single sign-on start refuses every open-redirect payload as its return path, or keeps a path of the platform", async () => {
    for (const payload of openRedirectPayloads()) {
      const reply = await client.send("GET", `/auth/oidc/login?return=${encodeURIComponent(payload)}`);
      const kept = safeReturnPath(payload);
      if (kept === undefined) {
        assert.equal(reply.status, 400, `${JSON.stringify(payload)}: ${reply.status} ${reply.body.slice(0, 200)}`);
        assert.match(reply.json().message, /return must be a relative path of this platform/);
        assert.equal(reply.headers["set-cookie"], undefined, "no login was started");
      } else {
        // Look-alikes of "/" inside a path: a path of the platform, percent-encoded.
        assert.equal(reply.status, 302, JSON.stringify(payload));
        assert.equal(new URL(kept, "https://platform.example.com").host, "platform.example.com");
      }
    }
  });

  it("a login ends on its return path of the platform, never on another host", async () => {
    const browser = new TestBrowser([platform.caPem, provider.tls.caPem]);
    const refused = await browser.navigate(
      `${platform.url}/auth/oidc/login?return=${encodeURIComponent("/.//evil.example.com")}`,
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.trail.length, 1, "the provider was never involved");
    let page = await browser.navigate(
      `${platform.url}/auth/oidc/login?return=${encodeURIComponent("/projects?tab=a#b")}`,
    );
    page = await browser.submit(page, { login: "olga", password: "x" });
    // The test provider's consent form on a first login.
    if (page.url.startsWith(provider.issuer) && formsOf(page).length > 0) page = await browser.submit(page);
    const last = page.trail.at(-1) ?? "";
    assert.ok(last.startsWith(`${platform.url}/projects?tab=a`), last);
  });

  it("the OpenID provider sends no browser to an address its client did not register, however it is written", async () => {
    for (const payload of ABSOLUTE_PAYLOADS) {
      const authorize = await client.send(
        "GET",
        `/oidc/auth?${new URLSearchParams({ client_id: WIKI.id, response_type: "code", scope: "openid", redirect_uri: payload, state: "s-0123456789" })}`,
        { accept: "text/html" },
      );
      assert.equal(authorize.status, 400, `authorize ${JSON.stringify(payload)}: ${authorize.status}`);
      assert.equal(authorize.headers.location, undefined);
      const logout = await client.send(
        "GET",
        `/oidc/session/end?${new URLSearchParams({ client_id: WIKI.id, post_logout_redirect_uri: payload })}`,
        { accept: "text/html" },
      );
      assert.equal(logout.status, 400, `post-logout ${JSON.stringify(payload)}: ${logout.status}`);
      assert.equal(logout.headers.location, undefined);
      assert.ok(!logout.body.includes('evil.example.com"'), "no form posts on to it");
    }
    // The registered addresses themselves are taken (the checks are not simply refusing everything).
    for (const uri of [WIKI.redirect, "https://a.teams.example.test/cb"]) {
      const authorize = await client.send(
        "GET",
        `/oidc/auth?${new URLSearchParams({ client_id: WIKI.id, response_type: "code", scope: "openid", redirect_uri: uri, state: "s-0123456789" })}`,
        { accept: "text/html" },
      );
      assert.equal(authorize.status, 303, `${uri}: ${authorize.body.slice(0, 200)}`);
    }
  });
});
