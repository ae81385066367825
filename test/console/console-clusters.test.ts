// The Clusters page in Chromium against a real platform: an administrator sees the registered clusters, and anybody
// creates a virtual cluster for a project on a cluster from a form; the platform refuses a cluster the user may not
// use, and the form shows the refusal in place.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  chromiumSkip,
  launchChromium,
  loginThroughConsole,
  PAGE_WAIT_MS,
  seriousViolations,
} from "../support/chromium.ts";
import { httpsCall } from "../support/https-call.ts";
import { type PlatformProcess, startPlatformProcess } from "../support/platform-process.ts";
import { describeInPrivateNetwork } from "../support/private-network.ts";

const API = "/kubernetes/management/apis/management.platform.sh/v1";
const SHOTS = process.env.CONSOLE_SCREENSHOTS ?? new URL("../../test-results/console/", import.meta.url).pathname;

describeInPrivateNetwork(import.meta.url, "clusters in the console", { skip: chromiumSkip, timeout: 180_000 }, () => {
  let platform: PlatformProcess;
  let browser: Browser;
  let page: Page;
  const admin = () => ({ authorization: `Bearer ${platform.adminKey}` });

  before(async () => {
    platform = await startPlatformProcess();
    for (const name of ["prod", "lab"]) {
      const created = await httpsCall(platform, "POST", `${API}/clusters`, admin(), {
        apiVersion: "management.platform.sh/v1",
        kind: "Cluster",
        metadata: { name },
        spec: { displayName: `The ${name} cluster` },
      });
      assert.equal(created.status, 201, created.text());
    }
    browser = await launchChromium();
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(PAGE_WAIT_MS);
    await page.goto(`${platform.url}/clusters`);
    const password = (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
    await loginThroughConsole(page, "admin", password);
    await page.waitForURL((url) => url.pathname === "/clusters");
  });

  after(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it("lists the connected clusters with their state and the command that reaches them", async () => {
    const row = page.getByRole("row", { name: /prod/ });
    await row.getByText("The prod cluster").waitFor();
    await row.getByText("Pending").waitFor();
    await row.getByText("virtualcluster connect cluster prod").waitFor();
    await page.screenshot({ path: join(SHOTS, "clusters.png"), fullPage: true });
    assert.deepEqual(await seriousViolations(page), []);
  });

  it("creates a virtual cluster for a project on a cluster, which the platform places there", async () => {
    // The project list answers only once the form is open: the choice waits for it (a loaded machine answers late).
    const isProjectList = (url: URL) => url.pathname === `${API}/projects`;
    let answer = () => {};
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    let listings = 0;
    await page.route(isProjectList, async (route) => {
      listings++;
      await held;
      await route.continue();
    });
    await page.getByRole("button", { name: "Create Virtual Cluster" }).first().click();
    const dialog = page.getByRole("dialog");
    const project = dialog.getByLabel("Project");
    assert.equal(await project.isDisabled(), true, "no project to choose before the list answers");
    assert.equal(await project.inputValue(), "");
    answer();
    await project.selectOption("default");
    await page.unroute(isProjectList);
    assert.equal(listings, 1, "the form asked for the project list once, and waited for it");
    await dialog.getByLabel("Cluster").selectOption("lab");
    await dialog.getByLabel("Name").fill("from-console");
    assert.deepEqual(await seriousViolations(page), []);
    await dialog.getByRole("button", { name: "Create" }).click();
    await page.getByText("Virtual cluster from-console is being created on cluster lab").waitFor();
    const created = await httpsCall(
      platform,
      "GET",
      `${API}/namespaces/p-default/virtualclusterinstances/from-console`,
      admin(),
    );
    assert.equal(created.status, 200, created.text());
    assert.equal(created.json().spec.clusterRef.cluster, "lab");
    assert.equal(created.json().spec.owner.user, "admin", "its creator owns it (and its runtime's key)");
  });

  it("says what is missing, and shows the platform's refusal at the field it names", async () => {
    await page.goto(`${platform.url}/clusters`);
    await page.getByRole("button", { name: "Create Virtual Cluster" }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Project").selectOption("default");
    await dialog.getByLabel("Cluster").selectOption("lab");
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog.getByText("Name is required.").waitFor();
    await dialog.getByLabel("Name").fill("Not_A_Name");
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog.getByText("The virtual cluster was not created").waitFor();
    await dialog.locator("#vc-name[aria-invalid=true]").waitFor();
    assert.match(await dialog.locator("#vc-name-helper").innerText(), /RFC 1123|lowercase/);
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });
});
