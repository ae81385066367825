// Single sign-on from the console's login page in Chromium: a button per connector of /auth/info, the provider's
// login, and the browser back at the return path with the session cookie (an OpenID provider of the tests, over
// HTTPS). Password login turned off hides the form.

import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import type { Browser } from "playwright-core";
import { chromiumSkip, launchChromium, PAGE_WAIT_MS, seriousViolations } from "../support/chromium.ts";
import { httpsCall } from "../support/https-call.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "../support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "../support/platform-process.ts";
import { describeInPrivateNetwork } from "../support/private-network.ts";
import { setPlatformConfig, tempFile } from "../support/sso-platform.ts";
import { waitFor } from "../support/wait-for.ts";

interface AuthInfo {
  password: { enabled: boolean };
  connectors: { displayName: string; providerType?: string }[];
}

/** The Config applies asynchronously: waits until /auth/info (what the login page reads) passes `check`. */
async function authInfoShows(platform: PlatformProcess, check: (info: AuthInfo) => boolean): Promise<AuthInfo> {
  let info: AuthInfo | undefined;
  await waitFor(async () => {
    const answer = await httpsCall(platform, "GET", "/auth/info", { accept: "application/json" });
    info = answer.status === 200 ? (JSON.parse(answer.text()) as AuthInfo) : undefined;
    return info !== undefined && check(info);
  }, "the login methods to follow the Config");
  return info as AuthInfo;
}

describeInPrivateNetwork(import.meta.url, "single sign-on from the console", { skip: chromiumSkip }, () => {
  let platform: PlatformProcess;
  let provider: OidcTestProvider;
  let browser: Browser;
  let oidc: string;
  let caFile: string;

  before(async () => {
    platform = await startPlatformProcess();
    provider = await startOidcTestProvider({ redirectUris: [`${platform.url}/auth/oidc/callback`] });
    provider.accounts.set("alice", { email: "alice@example.com", preferred_username: "alice", name: "Alice Example" });
    caFile = await tempFile("provider-ca.pem", provider.tls.caPem);
    oidc = `auth:\n  oidc:\n${oidcBlockYaml(provider, { callbackUrl: `${platform.url}/auth/oidc/callback`, caFile, indent: "    " })}`;
    await setPlatformConfig(platform, oidc);
    await authInfoShows(platform, (info) => info.connectors.length === 1);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await platform?.stop();
    await provider?.close();
  });

  it("logs in through the connector's button and lands on the return path with the session cookie", async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_WAIT_MS);
    await page.goto(`${platform.url}/login?return=${encodeURIComponent("/profile")}`);
    const button = page.getByRole("link", { name: "Log in with OpenID Connect" });
    await button.waitFor();
    assert.equal(await button.getAttribute("href"), "/auth/oidc/login?return=%2Fprofile");
    assert.deepEqual(await seriousViolations(page), []);
    await button.click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name="login"]').fill("alice");
    await page.locator('input[name="password"]').fill("anything");
    await page.locator('button[type="submit"]').click();
    // The provider's consent prompt on a first login.
    const consent = page.locator('button[type="submit"]');
    if (new URL(page.url()).origin === provider.issuer && (await consent.count()) > 0) await consent.click();
    await page.waitForURL((url) => url.origin === platform.url && url.pathname === "/profile");
    await page.getByRole("heading", { name: "Profile" }).waitFor();
    await page.getByText("alice", { exact: true }).first().waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === "vcp_session");
    assert.equal(cookie?.httpOnly, true);
    await context.close();
  });

  it("shows the provider's type (an oidc block's type) on its button and in /auth/info", async () => {
    // The built-in block is named by its type; a connector keeps its own name and shows the type beside it.
    const corp = oidcBlockYaml(provider, {
      callbackUrl: `${platform.url}/auth/corp/callback`,
      caFile,
      indent: "      ",
      extra: ["type: Okta"],
    });
    await setPlatformConfig(
      platform,
      `${oidc}    type: Keycloak\n  connectors:\n  - id: corp\n    displayName: Corporate login\n    oidc:\n${corp}`,
    );
    const info = await authInfoShows(platform, (shown) => shown.connectors.length === 2);
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    assert.deepEqual(
      info.connectors.map((c) => [c.displayName, c.providerType]),
      [
        ["Keycloak", "Keycloak"],
        ["Corporate login", "Okta"],
      ],
    );
    await page.goto(`${platform.url}/login`);
    await page.getByRole("link", { name: "Log in with Keycloak", exact: true }).waitFor();
    await page.getByRole("link", { name: "Log in with Corporate login (Okta)" }).waitFor();
    await context.close();
    await setPlatformConfig(platform, oidc);
    await authInfoShows(platform, (shown) => shown.connectors.length === 1);
  });

  it("shows only the connectors when password login is off", async () => {
    await setPlatformConfig(platform, `${oidc}  password:\n    disabled: true\n`);
    await authInfoShows(platform, (info) => !info.password.enabled);
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${platform.url}/login`);
    await page.getByRole("link", { name: "Log in with OpenID Connect" }).waitFor();
    assert.equal(await page.getByRole("textbox", { name: "Password" }).count(), 0);
    await context.close();
  });
});
