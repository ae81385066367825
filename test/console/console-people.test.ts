// The web console as three people, in Debian's Chromium (playwright-core) against the real platform over HTTPS:
// maria, a member of project "web" (role edit) and of team "frontend"; nico, a user with no role and no project;
// and the admin. Each sees only what the server lets him (SelfSubjectRulesReview), with no action he may not take
// and no "forbidden" on any page; every page is checked with axe-core and saved as a screenshot under
// test-results/console/. Also: forms that check required fields before anything is sent, keys whose tables tell
// their real expiry and limits, the admin's overview (health, replicas, audit, sign-on), detail pages for a user, a
// project and a virtual cluster with their audit trails, and the Audit page's one row per request.

import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
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
import { type CallReply, httpsCall } from "../support/https-call.ts";
import { type PlatformProcess, startPlatformProcess } from "../support/platform-process.ts";
import { describeInPrivateNetwork } from "../support/private-network.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Waits until the element `id` has the focus. A form moves it there in the animation frame after the render that
 * shows the error, so the error's text can be on the page a moment before the focus is.
 */
async function focusMovesTo(page: Page, id: string): Promise<void> {
  // A string, not a function: this file is compiled without the DOM's types.
  await page.waitForFunction(`document.activeElement?.id === ${JSON.stringify(id)}`);
}

const API = "/kubernetes/management/apis/management.platform.sh/v1";
const V1 = "management.platform.sh/v1";
const SHOTS = process.env.CONSOLE_SCREENSHOTS ?? new URL("../../test-results/console/", import.meta.url).pathname;
const DAY = 86_400;

describeInPrivateNetwork(
  import.meta.url,
  "the web console as a member, a user without a role, and the admin",
  { skip: chromiumSkip },
  () => {
    let platform: PlatformProcess;
    let browser: Browser;
    const pages: Record<string, Page> = {};
    const problems: string[] = [];
    /** Set while a person looks where he may not (a 403 is then the answer the page shows). */
    let refusalsExpected = false;
    const admin = (method: string, path: string, body?: unknown): Promise<CallReply> =>
      httpsCall(platform, method, path, { authorization: `Bearer ${platform.adminKey}` }, body);
    const created = async (method: string, path: string, body?: unknown) => {
      const reply = await admin(method, path, body);
      assert.ok(reply.status < 300, `${method} ${path}: ${reply.status} ${reply.text()}`);
      return reply.json();
    };
    const keysOf = async (user: string) =>
      (await created("GET", `${API}/ownedaccesskeys?fieldSelector=spec.user%3D${user}`)).items as {
        spec: { displayName: string; type: string };
      }[];

    /** Screenshot and accessibility check of a person's page as it is now; no page says "forbidden". */
    const check = async (who: string, name: string) => {
      const page = pages[who];
      await page.waitForLoadState("load");
      await page.screenshot({ path: join(SHOTS, `${who}-${name}.png`), fullPage: true });
      const violations = await seriousViolations(page);
      assert.deepEqual(violations, [], `${who} ${name}: ${JSON.stringify(violations, null, 1)}`);
      assert.equal(await page.getByText(/forbidden/i).count(), 0, `${who} ${name} shows no "forbidden"`);
    };
    const navItems = async (page: Page) =>
      (await page.getByRole("navigation", { name: "Console" }).getByRole("link").allInnerTexts()).map((t) => t.trim());

    before(async () => {
      await mkdir(SHOTS, { recursive: true });
      platform = await startPlatformProcess({ extraArgs: ["--instance-offline-after-seconds", "86400"] });
      await created("PATCH", `${API}/configs/platform-config`, {
        spec: { raw: "audit:\n  enabled: true\n  level: 1\n  path: audit.log\n" },
      });
      // The Config applies asynchronously: the objects below are made once requests are recorded.
      await waitFor(
        async () => (await admin("GET", `${API}/auditevents?limit=1`)).json().items.length > 0,
        "audit to record requests",
      );
      for (const [name, displayName] of [
        ["maria", "Maria Member"],
        ["nico", "Nico Newcomer"],
      ]) {
        await created("POST", `${API}/users`, {
          apiVersion: V1,
          kind: "User",
          metadata: { name },
          spec: { username: name, displayName, email: `${name}@example.com` },
        });
        await created("POST", `${API}/users/${name}/password`, { spec: { password: `${name}-password-1` } });
      }
      await created("POST", `${API}/teams`, {
        apiVersion: V1,
        kind: "Team",
        metadata: { name: "frontend" },
        spec: { displayName: "Frontend", users: ["maria"] },
      });
      await created("POST", `${API}/projects`, {
        apiVersion: V1,
        kind: "Project",
        metadata: { name: "web" },
        spec: { displayName: "Web shop", members: [{ kind: "User", name: "maria", clusterRole: "edit" }] },
      });
      await created("POST", `${API}/namespaces/p-web/virtualclusterinstances`, {
        apiVersion: V1,
        kind: "VirtualClusterInstance",
        metadata: { name: "shop" },
        spec: { displayName: "Shop", external: true, clusterRef: { cluster: "host-1", namespace: "team-web" } },
      });
      const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
      await created("PATCH", `${API}/namespaces/p-web/virtualclusterinstances/shop/status`, {
        status: {
          phase: "Ready",
          online: true,
          lastHeartbeatTime: now,
          kubernetesVersion: "v1.33.1",
          conditions: [{ type: "Ready", status: "True", reason: "Connected", lastTransitionTime: now }],
        },
      });
      // A key of maria's that ends in three days: the overview warns about it.
      await created("POST", `${API}/ownedaccesskeys`, {
        apiVersion: V1,
        kind: "OwnedAccessKey",
        metadata: { name: "maria-ci" },
        spec: { user: "maria", displayName: "Maria's CI", ttl: 3 * DAY },
      });

      browser = await launchChromium();
      const password = (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
      for (const [who, secret] of [
        ["maria", "maria-password-1"],
        ["nico", "nico-password-1"],
        ["admin", password],
      ]) {
        const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        page.setDefaultTimeout(PAGE_WAIT_MS);
        page.on("pageerror", (error) => problems.push(`${who}: page error at ${page.url()}: ${error.message}`));
        page.on("response", (response) => {
          // The console asks only what it may: no API call of a signed-in page is refused.
          if (response.status() === 403 && !refusalsExpected)
            problems.push(`${who}: 403 for ${response.request().method()} ${response.url()}`);
        });
        await page.goto(`${platform.url}/login`);
        await loginThroughConsole(page, who, secret);
        await page.waitForURL((url) => url.pathname === "/");
        pages[who] = page;
      }
    });

    after(async () => {
      await browser?.close();
      await platform?.stop();
    });

    it("the member lands on an overview of his projects, live virtual clusters and a key about to expire", async () => {
      const page = pages.maria;
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      await page.getByRole("link", { name: "Web shop" }).waitFor();
      const row = page.getByRole("grid", { name: "Virtual clusters" }).getByRole("row", { name: /Shop/ });
      await row.getByText("Online").waitFor();
      await row.getByText("Ready").waitFor();
      const soon = page.getByRole("grid", { name: "Access keys expiring within a week" });
      await soon
        .getByRole("row", { name: /Maria's CI/ })
        .getByText("in 3 days")
        .waitFor();
      await page.getByText(/This session ends in 20 days/).waitFor();
      assert.equal(await page.getByRole("heading", { name: "Platform health" }).count(), 0, "no health for members");
      assert.deepEqual(await navItems(page), ["Overview", "Projects", "Teams", "Access Keys"]);
      await check("maria", "overview");

      // Live: the virtual cluster going offline shows without a reload.
      await created("PATCH", `${API}/namespaces/p-web/virtualclusterinstances/shop/status`, {
        status: { online: false },
      });
      await row.getByText("Offline").waitFor();
      await created("PATCH", `${API}/namespaces/p-web/virtualclusterinstances/shop/status`, {
        status: { online: true },
      });
      await row.getByText("Online").waitFor();
    });

    it("the member sees his projects only, and the project and virtual cluster pages with the actions he may take", async () => {
      const page = pages.maria;
      await page.getByRole("link", { name: "Projects", exact: true }).click();
      const table = page.getByRole("grid", { name: "Projects" });
      await table.getByRole("link", { name: "web" }).waitFor();
      assert.equal(await table.getByRole("row").count(), 2, "the header and web: not default");
      assert.equal(await page.getByRole("button", { name: "Create Project" }).count(), 0);
      await table.getByRole("button", { name: "Actions for web" }).click();
      assert.deepEqual(
        await page.getByRole("menuitem").allInnerTexts(),
        ["Open"],
        "an editor cannot change the project",
      );
      await page.keyboard.press("Escape");
      await check("maria", "projects");

      await table.getByRole("link", { name: "web" }).click();
      await page.getByRole("heading", { name: "Project Web shop" }).waitFor();
      await page.getByRole("grid", { name: "Members" }).getByText("maria").waitFor();
      assert.equal(await page.getByRole("button", { name: "Edit members" }).count(), 0);
      assert.equal(await page.getByRole("heading", { name: "Changes to this project" }).count(), 0, "no audit access");
      await page.getByRole("button", { name: "Actions for shop" }).click();
      assert.deepEqual(await page.getByRole("menuitem").allInnerTexts(), [
        "Download kubeconfig",
        "Copy connect command",
        "Issue endpoint token",
      ]);
      await page.keyboard.press("Escape");
      await check("maria", "project");

      await page.getByRole("link", { name: "Shop" }).click();
      await page.getByRole("heading", { name: "Virtual cluster Shop" }).waitFor();
      await page.getByRole("grid", { name: "Conditions" }).getByText("Connected").waitFor();
      await page.getByText("v1.33.1").waitFor();
      await page.getByRole("button", { name: "Download kubeconfig" }).waitFor();
      await check("maria", "virtual-cluster");
    });

    it("Create Access Key checks the Display Name before sending; the table tells expiry and limits truthfully", async () => {
      const page = pages.maria;
      await page.getByRole("link", { name: "Access Keys" }).click();
      await page.getByRole("heading", { name: "Access Keys" }).waitFor();
      const login = page.getByRole("row", { name: /Password login/ });
      await login.getByText("in 20 days").waitFor();
      await login.getByText("This session").waitFor();
      const before = (await keysOf("maria")).length;

      await page.getByRole("button", { name: "Create Access Key" }).first().click();
      const dialog = page.getByRole("dialog");
      const name = dialog.getByRole("textbox", { name: "Display Name" });
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText("Display Name is required.").waitFor();
      assert.equal(await name.getAttribute("aria-invalid"), "true");
      await focusMovesTo(page, "key-display-name");
      await check("maria", "access-keys-required");
      await name.fill("   ");
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText("Display Name is required.").waitFor();
      assert.equal((await keysOf("maria")).length, before, "nothing was sent");

      await name.fill("deploy web");
      await dialog.getByRole("combobox", { name: "Expiry" }).selectOption({ label: "7 days" });
      await dialog.getByRole("checkbox", { name: "Limit Scope" }).check();
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText("Choose what the key may reach, or clear Limit Scope.").waitFor();
      await dialog.getByRole("textbox", { name: "Projects" }).fill("web");
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByRole("textbox", { name: "New access key" }).waitFor();
      await dialog.getByRole("button", { name: "Done" }).click();
      const row = page.getByRole("row", { name: /deploy web/ });
      await row.getByText("in 7 days").waitFor();
      await row.getByText("Project web").waitFor();
      await page
        .getByRole("row", { name: /Maria's CI/ })
        .getByText("Full access")
        .waitFor();
      await check("maria", "access-keys");
    });

    it("the member sees his teams, edits his profile and changes his password (then logs in again)", async () => {
      const page = pages.maria;
      await page.getByRole("link", { name: "Teams" }).click();
      await page.getByRole("heading", { name: "Your teams" }).waitFor();
      await page.getByRole("grid", { name: "Teams" }).getByText("frontend", { exact: true }).waitFor();
      assert.equal(await page.getByRole("button", { name: "Create Team" }).count(), 0);
      await check("maria", "teams");

      await page.getByRole("button", { name: "Maria Member" }).click();
      await page.getByRole("menuitem", { name: "Profile" }).click();
      await page.getByRole("heading", { name: "Profile" }).waitFor();
      await page.getByText("frontend", { exact: true }).waitFor();
      await check("maria", "profile");
      await page.getByRole("button", { name: "Edit profile" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByRole("textbox", { name: "Email" }).fill("not-an-address");
      await dialog.getByRole("button", { name: "Save" }).click();
      await dialog.getByText("Not an e-mail address.").waitFor();
      await dialog.getByRole("textbox", { name: "Email" }).fill("maria@web.example.com");
      await dialog.getByRole("button", { name: "Save" }).click();
      await dialog.waitFor({ state: "detached" });
      await page.getByText("maria@web.example.com").waitFor();
      assert.equal((await created("GET", `${API}/users/maria`)).spec.email, "maria@web.example.com");

      await page.getByRole("button", { name: "Change password" }).click();
      const newPassword = dialog.locator("#password-new");
      await newPassword.fill("short");
      await dialog.getByRole("button", { name: "Change password" }).click();
      await dialog.getByText("At least 8 characters.").first().waitFor();
      await dialog.locator("#password-current").fill("wrong-password");
      await newPassword.fill("maria-password-2");
      await dialog.locator("#password-again").fill("maria-password-2");
      refusalsExpected = true; // the server refuses the wrong current password (403)
      await dialog.getByRole("button", { name: "Change password" }).click();
      await dialog.getByText("This is not your current password.").waitFor();
      refusalsExpected = false;
      await focusMovesTo(page, "password-current");
      await check("maria", "profile-password-refused");
      await dialog.locator("#password-current").fill("maria-password-1");
      await dialog.getByRole("button", { name: "Change password" }).click();
      await dialog.getByText("Your password was changed.").waitFor();
      await dialog.getByRole("button", { name: "Done" }).click();
      await page.waitForURL((url) => url.pathname === "/login");
      await loginThroughConsole(page, "maria", "maria-password-2");
      await page.waitForURL((url) => url.pathname === "/");
      await page.getByRole("link", { name: "Web shop" }).waitFor();
    });

    it("a page the member may not use sends him to the overview, without an error", async () => {
      const page = pages.maria;
      // The first lists of a page are asked together with the session (before the console knows who asks): here
      // the Users page's lists are refused, and nothing shows it.
      refusalsExpected = true;
      try {
        await page.goto(`${platform.url}/users`, { waitUntil: "commit" });
        await page.waitForURL((url) => url.pathname === "/");
        await page.getByRole("heading", { name: "Overview" }).waitFor();
        await page.getByRole("link", { name: "Web shop" }).waitFor();
        assert.equal(await page.getByText(/forbidden/i).count(), 0);
      } finally {
        refusalsExpected = false;
      }
    });

    it("a user with no role sees an overview, projects and keys that say what to do, and no action he may not take", async () => {
      const page = pages.nico;
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      await page.getByText("You are not a member of any project.").first().waitFor();
      await page.getByText("No virtual clusters yet").waitFor();
      assert.deepEqual(await navItems(page), ["Overview", "Projects", "Access Keys"]);
      await check("nico", "overview");
      await page.getByRole("link", { name: "Projects", exact: true }).click();
      await page.getByRole("heading", { name: "Projects", exact: true }).waitFor();
      await page.getByText("You are not a member of any project.").waitFor();
      assert.equal(await page.getByRole("button", { name: "Create Project" }).count(), 0);
      await check("nico", "projects");
      await page.getByRole("link", { name: "Access Keys" }).click();
      await page.getByRole("row", { name: /Password login/ }).waitFor();
      await check("nico", "access-keys");
      await page.goto(`${platform.url}/profile`);
      await page.getByRole("heading", { name: "Profile" }).waitFor();
      await page.getByRole("button", { name: "Change password" }).waitFor();
      await check("nico", "profile");
      refusalsExpected = true;
      try {
        await page.goto(`${platform.url}/projects/web`);
        await page.getByText("No project here").waitFor();
        await check("nico", "project-not-his");
      } finally {
        await page.goto(`${platform.url}/access-keys`);
        await page.getByRole("row", { name: /Password login/ }).waitFor();
        refusalsExpected = false;
      }
    });

    it("the admin's overview shows the platform's health: readiness, store, replicas, audit and sign-on", async () => {
      const page = pages.admin;
      const health = page.getByRole("heading", { name: "Platform health" });
      await health.waitFor();
      await page.getByText("store-space: ok").waitFor();
      await page.getByText(/SQLite \(embedded\)/).waitFor();
      await page.getByRole("grid", { name: "Replicas" }).getByText("Leader").waitFor();
      await page.getByText(/On, writing .*audit\.log/).waitFor();
      await page.getByText(/Password login on; no connectors/).waitFor();
      assert.deepEqual(await navItems(page), [
        "Overview",
        "Projects",
        "Users",
        "Teams",
        "Clusters",
        "Access Keys",
        "Config",
        "Audit",
      ]);
      await check("admin", "overview");
    });

    it("the admin's user page shows the user's teams, projects, keys and audit trail", async () => {
      const page = pages.admin;
      await page.goto(`${platform.url}/users`);
      await page.getByRole("link", { name: "maria" }).click();
      await page.getByRole("heading", { name: "User Maria Member" }).waitFor();
      await page.getByText("frontend", { exact: true }).waitFor();
      await page.getByRole("link", { name: "web" }).waitFor();
      await page.getByRole("row", { name: /deploy web/ }).waitFor();
      const requests = page.getByRole("grid", { name: "Requests by maria" });
      await requests.getByRole("row").nth(1).waitFor();
      await check("admin", "user");
      await page.goto(`${platform.url}/projects/web/virtualclusters/shop`);
      await page.getByRole("grid", { name: "Changes to this virtual cluster" }).getByText("patch").first().waitFor();
      await check("admin", "virtual-cluster");
    });

    it("Add User checks before sending and shows a refusal at the field it concerns", async () => {
      const page = pages.admin;
      await page.goto(`${platform.url}/users`);
      await page.getByRole("button", { name: "Add User" }).first().click();
      const dialog = page.getByRole("dialog");
      await dialog.getByRole("button", { name: "Create" }).click();
      await dialog.getByText("Username is required.").waitFor();
      await dialog.getByRole("textbox", { name: "Username" }).fill("maria");
      await dialog.getByLabel("Password").fill("maria-again-1");
      await dialog.getByRole("button", { name: "Create" }).click();
      const username = dialog.getByRole("textbox", { name: "Username" });
      await dialog
        .locator("#user-username-helper")
        .getByText(/already exists/)
        .waitFor();
      assert.equal(await username.getAttribute("aria-invalid"), "true");
      await focusMovesTo(page, "user-username"); // where the user looks
      await check("admin", "users-add-refused");
      await dialog.getByRole("button", { name: "Cancel" }).click();
    });

    it("the Audit page shows one row per request with its stages, hides the console's own files, and opens a request", async () => {
      const page = pages.admin;
      await waitFor(async () => {
        const list = await admin("GET", `${API}/auditevents?fieldSelector=objectRef.resource%3Dprojects,verb%3Dcreate`);
        return list.json().items.length >= 2;
      }, "the project's create stages in the datastore");
      await page.getByRole("link", { name: "Audit" }).click();
      const table = page.getByRole("grid", { name: "Audit events" });
      await table.waitFor();
      const uris = await table.getByRole("row").allInnerTexts();
      assert.equal(
        uris.some((row) => row.includes("/assets/")),
        false,
        "the console's own files are hidden by default",
      );
      await page.getByText(/requests of the console's own files hidden/).waitFor();
      await page.getByRole("checkbox", { name: "Show the console's own requests" }).check();
      await table
        .getByText(/\/assets\//)
        .first()
        .waitFor();
      await page.getByRole("checkbox", { name: "Show the console's own requests" }).uncheck();

      // RequestReceived names the resource but not yet the object (its body is unread): select by resource.
      await page.getByLabel("Resource", { exact: true }).fill("projects");
      await page.getByLabel("Verb", { exact: true }).fill("create");
      await page.getByRole("button", { name: "Search" }).click();
      const row = table.getByRole("row", { name: /projects/ });
      // The table shows the previous page's rows until the search's answer replaces them.
      await waitFor(async () => (await row.count()) === 1, "the search's one row");
      await row.getByText("ResponseComplete").waitFor();
      await row.getByText("RequestReceived").waitFor();
      assert.equal(await row.count(), 1, "one row for the request, not one per stage");
      await check("admin", "audit");
      await row.getByRole("link").click();
      await page.getByRole("heading", { name: /^Request / }).waitFor();
      await page.getByRole("heading", { name: /^RequestReceived/ }).waitFor();
      await page.getByText('"requestURI"').first().waitFor();
      await check("admin", "audit-request");
    });

    it("raised no page error and asked the API nothing it refused", () => {
      assert.deepEqual(problems, []);
    });
  },
);
