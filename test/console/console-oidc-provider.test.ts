// The console's login page as the platform's OpenID provider uses it (issue 20): a browser without a platform
// session that a relying party sends to /oidc is sent to /login?return=/oidc/interaction/<uid>; after a password
// login there it goes on to the relying party with a code, in Chromium.

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { chromiumSkip, launchChromium, loginThroughConsole } from "../support/chromium.ts";
import { httpsCall } from "../support/https-call.ts";
import { type PlatformProcess, startPlatformProcess } from "../support/platform-process.ts";
import { setPlatformConfig } from "../support/sso-platform.ts";

const REDIRECT = "https://grafana.example.test/login/generic_oauth";

describe("the console's login page for the OpenID provider", { skip: chromiumSkip }, () => {
  let platform: PlatformProcess;
  let browser: Browser;

  before(async () => {
    platform = await startPlatformProcess();
    await setPlatformConfig(
      platform,
      `oidc:\n  clients:\n  - name: Grafana\n    clientId: grafana\n    clientSecret: grafana-s3cret-1234\n    redirectURIs: [${REDIRECT}]\n`,
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it("sends a browser without a session through /login?return= and on to the relying party with a code", async () => {
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
    page.setDefaultTimeout(20_000);
    await page.goto(authorize.toString());
    await page.waitForURL(
      (url) => url.pathname === "/login" && /^\/oidc\/interaction\//.test(url.searchParams.get("return") ?? ""),
    );
    const password = (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
    // The relying party: nothing answers there (no such host); the browser's request for it is the answer.
    const redirected = page.waitForRequest((request) => request.url().startsWith(REDIRECT));
    await loginThroughConsole(page, "admin", password);
    const arrived = new URL((await redirected).url());
    assert.equal(arrived.searchParams.get("state"), "state-1234567890");
    assert.ok(arrived.searchParams.get("code"), "a code for the relying party");
    await context.close();
  });
});
