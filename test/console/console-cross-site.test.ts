// The console against another site, in Chromium over HTTPS (issue 29 items 4 and 5): every known open-redirect
// payload given as /login?return= keeps the browser on the platform (the password login of the report,
// return=/.//evil.example.com, among them), and a page on another site that posts to /auth/logout leaves the
// session as it was, while the console's own logout ends it.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { openRedirectPayloads } from "../../src/utils/testing-open-redirects.ts";
import { chromiumSkip, launchChromium, loginThroughConsole, PAGE_WAIT_MS } from "../support/chromium.ts";
import { httpsCall } from "../support/https-call.ts";
import { type PlatformProcess, startPlatformProcess } from "../support/platform-process.ts";
import { describeInPrivateNetwork } from "../support/private-network.ts";

const API = "/kubernetes/management/apis/management.platform.sh/v1";

describeInPrivateNetwork(import.meta.url, "the console against another site", { skip: chromiumSkip }, () => {
  let platform: PlatformProcess;
  let browser: Browser;
  let attacker: Server;
  let attackerUrl: string;
  let password: string;
  let platformHost: string;

  before(async () => {
    platform = await startPlatformProcess();
    platformHost = new URL(platform.url).host;
    password = (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
    // Another site (localhost, not the platform's 127.0.0.1): a page that posts a logout form to the platform.
    attacker = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" }).end(
        `<!doctype html><form method="post" action="${platform.url}/auth/logout"></form>
<script>document.forms[0].submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    attackerUrl = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await platform?.stop();
  });

  /** A fresh browser profile that records every host it sends a request to (other sites are refused). */
  async function freshContext(): Promise<{ context: BrowserContext; page: Page; hosts: Set<string> }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const hosts = new Set<string>();
    await context.route(
      (url) => url.host !== platformHost && !url.href.startsWith(attackerUrl),
      (route) => {
        hosts.add(new URL(route.request().url()).host || route.request().url());
        return route.abort();
      },
    );
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_WAIT_MS);
    return { context, page, hosts };
  }

  const onPlatform = (page: Page) => new URL(page.url()).host === platformHost;
  const session = async (context: BrowserContext) => (await context.cookies()).find((c) => c.name === "vcp_session");

  it("a password login with return=/.//evil.example.com and other forms of it stays on the platform", async () => {
    for (const payload of [
      "/.//evil.example.com",
      "/%2e//evil.example.com",
      "/a/..//evil.example.com",
      "//evil.example.com",
    ]) {
      const { context, page, hosts } = await freshContext();
      await page.goto(`${platform.url}/login?return=${encodeURIComponent(payload)}`);
      await loginThroughConsole(page, "admin", password);
      await page.waitForURL((url) => url.host === platformHost && url.pathname !== "/login");
      await page.waitForLoadState("load");
      assert.ok(onPlatform(page), `${payload} left for ${page.url()}`);
      assert.deepEqual([...hosts], [], `${payload}: requests to other hosts`);
      await context.close();
    }
  });

  it("every known open-redirect payload as a return path keeps a signed-in browser on the platform", async () => {
    const { context, page, hosts } = await freshContext();
    await page.goto(`${platform.url}/login`);
    await loginThroughConsole(page, "admin", password);
    await page.waitForURL((url) => url.pathname !== "/login");
    for (const payload of openRedirectPayloads()) {
      await page.goto(`${platform.url}/login?return=${encodeURIComponent(payload)}`);
      const onward = page.getByRole("link", { name: "Continue as admin" });
      await onward.waitFor();
      const href = (await onward.getAttribute("href")) ?? "";
      assert.ok(href.startsWith("/") && !href.startsWith("//") && !href.startsWith("/\\"), `${payload}: ${href}`);
      // Where Chromium's own URL parser sends the browser on a click.
      const lands = await page.evaluate(`new URL(${JSON.stringify(href)}, document.baseURI).host`);
      assert.equal(lands, platformHost, `${JSON.stringify(payload)} would leave for ${lands}`);
    }
    assert.deepEqual([...hosts], [], "requests to other hosts");
    await context.close();
  });

  it("a page on another site that posts to /auth/logout leaves the session; the console's logout ends it", async () => {
    const { context, page } = await freshContext();
    await page.goto(`${platform.url}/login?return=%2Fusers`);
    await loginThroughConsole(page, "admin", password);
    await page.waitForURL((url) => url.pathname === "/users");
    const before = await session(context);
    assert.ok(before);

    const visit = await context.newPage();
    const answered = visit.waitForResponse((response) => response.url() === `${platform.url}/auth/logout`);
    await visit.goto(attackerUrl);
    const answer = await answered;
    assert.equal(answer.status(), 403);
    await visit.close();
    assert.equal((await session(context))?.value, before.value, "the session cookie is still there");
    const stillWorks = await httpsCall(platform, "GET", `${API}/users`, {
      cookie: `vcp_session=${before.value}`,
      "x-platform-console": "1",
    });
    assert.equal(stillWorks.status, 200, "and its key still works");

    await page.goto(`${platform.url}/users`);
    await page.getByRole("button", { name: "Admin", exact: true }).click();
    await page.getByRole("menuitem", { name: "Log out" }).click();
    await page.waitForURL(/\/login$/);
    assert.equal(await session(context), undefined, "the console's logout ended it");
    const ended = await httpsCall(platform, "GET", `${API}/users`, {
      cookie: `vcp_session=${before.value}`,
      "x-platform-console": "1",
    });
    assert.equal(ended.status, 401);
    await context.close();
  });
});
