// The console's login page as the platform's OpenID provider uses it (issue 20): a browser without a platform
// session that a relying party sends to /oidc is sent to /login?return=/oidc/interaction/<uid>; after a password
// login there, or a single sign-on login through a connector's button, it goes on to the relying party with a code,
// in Chromium.

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { chromiumSkip, launchChromium, loginThroughConsole, PAGE_WAIT_MS } from "../support/chromium.ts";
import { httpsCall } from "../support/https-call.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "../support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "../support/platform-process.ts";
import { describeInPrivateNetwork } from "../support/private-network.ts";
import { setPlatformConfig, tempFile } from "../support/sso-platform.ts";
import { waitFor } from "../support/wait-for.ts";

const REDIRECT = "https://grafana.example.test/login/generic_oauth";

describeInPrivateNetwork(
  import.meta.url,
  "the console's login page for the OpenID provider",
  { skip: chromiumSkip },
  () => {
    let platform: PlatformProcess;
    let provider: OidcTestProvider;
    let browser: Browser;

    before(async () => {
      platform = await startPlatformProcess();
      // The platform's own login through single sign-on: an OpenID provider of the tests as its connector.
      provider = await startOidcTestProvider({ redirectUris: [`${platform.url}/auth/oidc/callback`] });
      provider.accounts.set("nina", { email: "nina@example.com", preferred_username: "nina" });
      const caFile = await tempFile("provider-ca.pem", provider.tls.caPem);
      await setPlatformConfig(
        platform,
        `oidc:\n  clients:\n  - name: Grafana\n    clientId: grafana\n    clientSecret: grafana-s3cret-1234\n    redirectURIs: [${REDIRECT}]\n` +
          `auth:\n  oidc:\n${oidcBlockYaml(provider, { callbackUrl: `${platform.url}/auth/oidc/callback`, caFile, indent: "    " })}`,
      );
      // The Config applies asynchronously: the login page's connector and the client must be there first.
      await waitFor(async () => {
        const info = await httpsCall(platform, "GET", "/auth/info", { accept: "application/json" });
        return info.status === 200 && info.json().connectors.length === 1;
      }, "the connector on the login page");
      await waitFor(async () => {
        const query = new URLSearchParams({
          client_id: "grafana",
          response_type: "code",
          scope: "openid",
          redirect_uri: REDIRECT,
        });
        const start = await httpsCall(platform, "GET", `/oidc/auth?${query}`);
        return start.status === 302 || start.status === 303;
      }, "the OpenID client grafana");
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await platform?.stop();
      await provider?.close();
    });

    /** A relying party's authorization request (PKCE), opened in a fresh browser context: lands on /login?return=. */
    async function startAtRelyingParty(): Promise<Page> {
      const discovery = (await httpsCall(platform, "GET", "/oidc/.well-known/openid-configuration")).json();
      const verifier = randomBytes(32).toString("base64url");
      const authorize = new URL(discovery.authorization_endpoint);
      authorize.search = new URLSearchParams({
        client_id: "grafana",
        response_type: "code",
        scope: "openid profile",
        redirect_uri: REDIRECT,
        state: "state-1234567890",
        nonce: "nonce-1234567890",
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
      }).toString();

      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      // The relying party: nothing listens there; the browser's arrival is the answer.
      await context.route("https://grafana.example.test/**", (route) =>
        route.fulfill({ status: 200, body: "relying party" }),
      );
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_WAIT_MS);
      await page.goto(authorize.toString());
      await page.waitForURL(
        (url) => url.pathname === "/login" && /^\/oidc\/interaction\//.test(url.searchParams.get("return") ?? ""),
      );
      return page;
    }

    it("sends a browser without a session through /login?return= and on to the relying party with a code", async () => {
      const page = await startAtRelyingParty();
      const password = (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
      // The relying party: nothing answers there (no such host); the browser's request for it is the answer.
      const redirected = page.waitForRequest((request) => request.url().startsWith(REDIRECT));
      await loginThroughConsole(page, "admin", password);
      const arrived = new URL((await redirected).url());
      assert.equal(arrived.searchParams.get("state"), "state-1234567890");
      assert.ok(arrived.searchParams.get("code"), "a code for the relying party");
      await page.context().close();
    });

    it("a single sign-on login from that page (the connector's button) goes on to the relying party as well", async () => {
      const page = await startAtRelyingParty();
      const back = new URL(page.url()).searchParams.get("return") ?? "";
      const button = page.getByRole("link", { name: "Log in with OpenID Connect" });
      await button.waitFor();
      assert.equal(await button.getAttribute("href"), `/auth/oidc/login?return=${encodeURIComponent(back)}`);
      const redirected = page.waitForRequest((request) => request.url().startsWith(REDIRECT));
      await button.click();
      await page.waitForURL((url) => url.origin === provider.issuer);
      await page.locator('input[name="login"]').fill("nina");
      await page.locator('input[name="password"]').fill("anything");
      await page.locator('button[type="submit"]').click();
      // The test provider's consent prompt on a first login.
      const consent = page.locator('button[type="submit"]');
      if (new URL(page.url()).origin === provider.issuer && (await consent.count()) > 0) await consent.click();
      const arrived = new URL((await redirected).url());
      assert.equal(arrived.searchParams.get("state"), "state-1234567890");
      assert.ok(arrived.searchParams.get("code"), "a code for the relying party");
      await page.context().close();
    });
  },
);
