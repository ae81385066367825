// The web console end to end in Debian's Chromium (playwright-core) against the real platform over HTTPS: log in,
// users (create, live update from elsewhere, lock), teams, an access key with a limited scope used with plain HTTPS
// requests then disabled and refused, projects and virtual clusters, the Config with an error at its line,
// uiSettings (logo, colors, nav buttons, legal text, CSP) applied without a restart, a narrow window, log out and an
// ended session, return paths. Every page is checked with axe-core (no serious or critical violation) and saved as
// a screenshot under test-results/console/.

import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
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
import { waitFor } from "../support/wait-for.ts";

const API = "/kubernetes/management/apis/management.platform.sh/v1";
const V1 = "management.platform.sh/v1";
const SHOTS = process.env.CONSOLE_SCREENSHOTS ?? new URL("../../test-results/console/", import.meta.url).pathname;

const call = (
  platform: PlatformProcess,
  method: string,
  path: string,
  headers?: Record<string, string>,
  body?: unknown,
) => httpsCall(platform, method, path, headers, body);

/** uiSettings with every branding field; `legal` is the legalTemplate. */
function brandedConfig(logo: string, legal: string): string {
  return [
    "uiSettings:",
    `  logoURL: ${logo}`,
    '  primaryColor: "#8a2be2"',
    '  sidebarColor: "#1b3a57"',
    '  accentColor: "#ffcc00"',
    `  legalTemplate: ${JSON.stringify(legal)}`,
    "  navBarButtons:",
    "    - text: Handbook",
    "      link: https://handbook.example.com/",
    "      position: TopEnd",
    "    - text: Status",
    "      link: https://status.example.com/",
    "  externalURLs:",
    "    block: true",
    "    allow:",
    "      - https://cdn.example.com/",
    "",
  ].join("\n");
}

describeInPrivateNetwork(import.meta.url, "web console in Chromium", { skip: chromiumSkip }, () => {
  let platform: PlatformProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let adminPassword: string;
  const problems: string[] = [];
  const admin = (method: string, path: string, body?: unknown) =>
    call(platform, method, path, { authorization: `Bearer ${platform.adminKey}` }, body);

  /** Screenshot and accessibility check of the page as it is now. */
  const check = async (name: string) => {
    await page.waitForLoadState("load");
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    const violations = await seriousViolations(page);
    assert.deepEqual(violations, [], `${name}: ${JSON.stringify(violations, null, 1)}`);
  };
  /** Waits until the public branding (what the next page load reads) passes `check`. */
  const brandingApplied = (check: (branding: Record<string, unknown>) => boolean) =>
    waitFor(async () => {
      const answer = await call(platform, "GET", "/console/settings", { accept: "application/json" });
      return answer.status === 200 && check(JSON.parse(answer.text()));
    }, "the console's branding to follow the Config");
  const sessionCookie = async () => (await context.cookies()).find((c) => c.name === "vcp_session");
  const login = loginThroughConsole;

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    platform = await startPlatformProcess();
    adminPassword = (await readFile(join(platform.dataDir, "admin-password"), "utf8")).trim();
    browser = await launchChromium();
    context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(PAGE_WAIT_MS);
    page.on("pageerror", (error) => problems.push(`page error at ${page.url()}: ${error.message}`));
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) {
        problems.push(`CSP at ${page.url()}: ${message.text().slice(0, 160)}`);
      }
    });
  });

  after(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it("serves the console at / for browsers and keeps the API's answers for API clients", async () => {
    const html = await call(platform, "GET", "/", { accept: "text/html" });
    assert.equal(html.status, 200);
    assert.match(String(html.headers["content-type"]), /text\/html/);
    assert.match(String(html.headers["content-security-policy"]), /script-src 'self'/);
    const anonymous = await call(platform, "GET", "/");
    assert.equal(anonymous.status, 401, "the root path list still needs credentials");
    const paths = await admin("GET", "/");
    assert.ok(paths.json().paths.includes("/apis/management.platform.sh/v1"));
    const json = await admin("GET", "/users");
    assert.equal(json.status, 404, "an API client asking for /users gets a Status, not the page");
  });

  it("logs in with the password and keeps the session in an HttpOnly, Secure, SameSite cookie", async () => {
    await page.goto(`${platform.url}/users`);
    await page.waitForURL(/\/login\?return=%2Fusers$/);
    await page.getByRole("textbox", { name: "Username" }).waitFor();
    await check("login");
    await login(page, "admin", "wrong-password");
    await page.getByText("Invalid username or password").waitFor();
    await login(page, "admin", adminPassword);
    await page.waitForURL(/\/users$/);
    await page.getByRole("heading", { name: "Users" }).waitFor();
    const cookie = await sessionCookie();
    assert.ok(cookie, "vcp_session is set");
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.secure, true);
    assert.equal(cookie.sameSite, "Lax");
    assert.equal(await page.evaluate("document.cookie.includes('vcp_session')"), false, "scripts cannot read it");
    await page.locator("td", { hasText: "admin" }).first().waitFor();
    await check("users");
  });

  it("accepts the cookie only with the console header (no CSRF through the cookie)", async () => {
    const cookie = `vcp_session=${(await sessionCookie())?.value}`;
    const bare = await call(platform, "GET", `${API}/users`, { cookie });
    assert.equal(bare.status, 401);
    const withHeader = await call(platform, "GET", `${API}/users`, { cookie, "x-platform-console": "1" });
    assert.equal(withHeader.status, 200);
  });

  it("creates a user with the form, shows a user created elsewhere without a reload, and locks one", async () => {
    await page.getByRole("button", { name: "Add User" }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("textbox", { name: "Username" }).fill("alice");
    await dialog.getByRole("textbox", { name: "Display Name" }).fill("Alice Liddell");
    await dialog.getByRole("textbox", { name: "Email" }).fill("alice@example.com");
    await dialog.getByLabel("Password").fill("alice-password-1");
    await check("users-add");
    await dialog.getByRole("button", { name: "Create" }).click();
    await page.locator("td", { hasText: "Alice Liddell" }).waitFor();
    const stored = (await admin("GET", `${API}/users/alice`)).json();
    assert.equal(stored.spec.email, "alice@example.com");

    // A 4xx shows the API's message in the form.
    await page.getByRole("button", { name: "Add User" }).first().click();
    await dialog.getByRole("textbox", { name: "Username" }).fill("alice");
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog.getByText(/already exists/).waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();

    const created = await admin("POST", `${API}/users`, {
      apiVersion: V1,
      kind: "User",
      metadata: { name: "bob" },
      spec: { username: "bob", displayName: "Bob from kubectl" },
    });
    assert.equal(created.status, 201, created.text());
    await page.locator("td", { hasText: "Bob from kubectl" }).waitFor();
    await check("users-list");

    await page.getByRole("button", { name: "Actions for alice" }).click();
    await page.getByRole("menuitem", { name: "Lock" }).click();
    await page.getByRole("row", { name: /alice/ }).getByText("Locked").waitFor();
    assert.equal((await admin("GET", `${API}/users/alice`)).json().spec.disabled, true);
    await page.getByRole("button", { name: "Actions for alice" }).click();
    await page.getByRole("menuitem", { name: "Unlock" }).click();
    await page.getByRole("row", { name: /alice/ }).getByText("Active").waitFor();

    await page.getByRole("textbox", { name: "Search users" }).fill("bob");
    await page.locator("td", { hasText: "Alice Liddell" }).waitFor({ state: "detached" });
    await page.getByRole("textbox", { name: "Search users" }).fill("");
  });

  it("sets a new password, edits a user, shows a user's access keys to the admin, and deletes with confirmation", async () => {
    await page.getByRole("button", { name: "Actions for alice" }).click();
    await page.getByRole("menuitem", { name: "Set Password" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("New password").fill("alice-password-2");
    await dialog.getByRole("button", { name: "Set password" }).click();
    await dialog.waitFor({ state: "detached" });
    const relogin = await call(
      platform,
      "POST",
      "/auth/password/login",
      {},
      { username: "alice", password: "alice-password-2" },
    );
    assert.equal(relogin.status, 200, "the new password works");

    await page.getByRole("button", { name: "Actions for alice" }).click();
    await page.getByRole("menuitem", { name: "Edit" }).click();
    await dialog.getByRole("textbox", { name: "Display Name" }).fill("Alice L.");
    await dialog.getByRole("textbox", { name: "Description" }).fill("Runs the payments platform");
    await dialog.getByRole("textbox", { name: "Icon" }).fill(`${platform.url}/favicon.ico`);
    // The admin's explicit link of this user to a single sign-on identity.
    await dialog.getByRole("textbox", { name: "Single sign-on subject" }).fill("sso:oidc:248289761001");
    await dialog.getByRole("checkbox", { name: "viewer" }).check();
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.locator("td", { hasText: "Alice L." }).waitFor();
    const edited = (await admin("GET", `${API}/users/alice`)).json();
    assert.deepEqual(edited.spec.clusterRoles, [{ name: "viewer" }]);
    assert.equal(edited.spec.subject, "sso:oidc:248289761001");
    const row = page.getByRole("row", { name: /alice/ });
    await row.getByText("Runs the payments platform").waitFor();
    assert.equal(
      await row.getByRole("img", { name: "Icon of alice" }).getAttribute("src"),
      `${platform.url}/favicon.ico`,
    );

    await page.getByRole("button", { name: "Actions for alice" }).click();
    await page.getByRole("menuitem", { name: "Access Keys" }).click();
    await page.getByRole("heading", { name: "Access Keys of alice" }).waitFor();
    await page.locator("td", { hasText: "Password login" }).first().waitFor();
    await check("user-access-keys");
    await page.getByRole("link", { name: "Users" }).first().click();

    await page.getByRole("button", { name: "Actions for bob" }).click();
    await page.getByRole("menuitem", { name: "Delete" }).click();
    await dialog.getByRole("heading", { name: /Delete user bob\?/ }).waitFor();
    await check("users-delete");
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.locator("td", { hasText: "Bob from kubectl" }).waitFor({ state: "detached" });
    assert.equal((await admin("GET", `${API}/users/bob`)).status, 404);
  });

  it("creates a team with a member", async () => {
    await page.getByRole("link", { name: "Teams" }).click();
    await page.getByText("No teams yet").waitFor();
    await check("teams-empty");
    await page.getByRole("button", { name: "Create Team" }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("textbox", { name: "Name", exact: true }).fill("platform-team");
    await dialog.getByRole("checkbox", { name: /alice/ }).check();
    await dialog.getByRole("button", { name: "Create" }).click();
    await page.locator("td", { hasText: "platform-team" }).waitFor();
    await check("teams");
    const team = (await admin("GET", `${API}/teams/platform-team`)).json();
    assert.deepEqual(team.spec.users, ["alice"]);
  });

  it("creates an access key with a limited scope, shows it once, and a disabled key is refused", async () => {
    await page.getByRole("link", { name: "Access Keys" }).click();
    await page.getByRole("heading", { name: "Access Keys" }).waitFor();
    await page.getByRole("button", { name: "Create Access Key" }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("textbox", { name: "Display Name" }).fill("ci-default-project");
    await dialog.getByRole("combobox", { name: "Expiry" }).selectOption({ label: "7 days" });
    await dialog.getByRole("checkbox", { name: "Limit Scope" }).check();
    await dialog.getByRole("textbox", { name: "Projects" }).fill("default");
    await check("access-keys-create");
    await dialog.getByRole("button", { name: "Create" }).click();
    const shown = dialog.getByRole("textbox", { name: "New access key" });
    await shown.waitFor();
    await check("access-keys-created");
    const key = await shown.inputValue();
    assert.ok(key.length > 20, "the key is shown");
    await dialog.getByRole("button", { name: "Done" }).click();
    await page.locator("td", { hasText: "ci-default-project" }).waitFor();
    assert.equal(await page.getByText(key).count(), 0, "the key is never shown again");
    await check("access-keys");

    const bearer = { authorization: `Bearer ${key}` };
    assert.equal((await call(platform, "GET", `${API}/projects/default`, bearer)).status, 200);
    const outside = await call(platform, "GET", `${API}/users`, bearer);
    assert.equal(outside.status, 403, "the scope keeps the key to the project");
    const listed = (await admin("GET", `${API}/ownedaccesskeys`))
      .json()
      .items.find((k: { spec: { displayName: string } }) => k.spec.displayName === "ci-default-project");
    assert.equal(listed.spec.ttl, 7 * 86400);
    assert.deepEqual(listed.spec.scope.projects, [{ project: "default" }]);

    await page.getByRole("button", { name: "Actions for ci-default-project" }).click();
    await page.getByRole("menuitem", { name: "Disable" }).click();
    await page
      .getByRole("row", { name: /ci-default-project/ })
      .getByText("Disabled")
      .waitFor();
    const refused = await call(platform, "GET", `${API}/projects/default`, bearer);
    assert.equal(refused.status, 401);
  });

  it("lists projects and a project's virtual clusters", async () => {
    await page.getByRole("link", { name: "Projects" }).click();
    await page.getByRole("link", { name: "default", exact: true }).waitFor();
    await check("projects");
    await page.getByRole("link", { name: "default", exact: true }).click();
    await page.getByText("No virtual clusters in this project").waitFor();
    await check("project-instances-empty");

    await page.getByRole("link", { name: "Projects" }).first().click();
    await page.getByRole("button", { name: "Actions for default" }).click();
    await page.getByRole("menuitem", { name: "Edit members" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Add member" }).click();
    const added = (await dialog.getByRole("textbox", { name: /Name of member/ }).count()) + 0;
    await dialog.getByRole("textbox", { name: `Name of member ${added}` }).fill("alice");
    await dialog.getByRole("combobox", { name: `Role of member ${added}` }).selectOption("edit");
    await check("project-members");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.locator("td", { hasText: "alice (edit)" }).waitFor();
    const members = (await admin("GET", `${API}/projects/default`)).json().spec.members;
    assert.ok(
      members.some((m: { name: string; clusterRole: string }) => m.name === "alice" && m.clusterRole === "edit"),
    );
  });

  it("shows the Config's validation errors at their lines", async () => {
    await page.getByRole("link", { name: "Config" }).click();
    const editor = page.getByRole("textbox", { name: "Platform config (YAML)" });
    await editor.waitFor();
    await editor.fill('auth:\n  groupsFilters:\n    - ok\n    - "("\n');
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("button", { name: "Line 4" }).waitFor();
    assert.equal(await page.locator('.vcp-line-error[data-line="4"]').count(), 1, "the gutter marks line 4");
    await check("config-error");
  });

  it("applies uiSettings on the next page load: logo, colors, nav buttons, legal text and CSP", async () => {
    const logo = `${platform.url}/assets/favicon.svg`;
    const hostile = "<p>Use is <b>monitored</b>.</p><img src=x onerror=alert(1)><script>alert(2)</script>";
    // The hostile legal text is looked at in a browser context of its own: Chromium reports the handler it refuses
    // as a CSP violation even where nothing runs, which would blur the check below that the console's own code
    // never trips the CSP.
    let saved = await admin("PATCH", `${API}/configs/platform-config`, { spec: { raw: brandedConfig(logo, hostile) } });
    assert.equal(saved.status, 200, saved.text());
    // The Config applies asynchronously: pages load once the branding they read has it.
    await brandingApplied((branding) => String(branding.legalTemplate ?? "").includes("onerror"));
    const fresh = await browser.newContext({ ignoreHTTPSErrors: true });
    const anonymous = await fresh.newPage();
    await anonymous.goto(`${platform.url}/login`);
    const legal = anonymous.getByTestId("legal");
    await legal.getByText("monitored").waitFor();
    assert.equal(await legal.locator("script, img, [onerror]").count(), 0, "sanitised");
    await anonymous.screenshot({ path: join(SHOTS, "login-branded.png"), fullPage: true });
    await fresh.close();

    // The rest through the Config page.
    const editor = page.getByRole("textbox", { name: "Platform config (YAML)" });
    await page.reload();
    await editor.fill(brandedConfig(logo, "<p>Use is <b>monitored</b>.</p>"));
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Config saved").waitFor();
    saved = await admin("GET", `${API}/configs/platform-config`);
    assert.match(JSON.parse(saved.text()).spec.raw, /Handbook/);
    await brandingApplied((branding) => !String(branding.legalTemplate ?? "").includes("onerror"));

    await page.goto(`${platform.url}/users`);
    const logoImage = page.getByRole("img", { name: "Virtual Cluster Platform" }).first();
    await logoImage.waitFor();
    assert.equal(await logoImage.getAttribute("src"), logo);
    const brand = await page.evaluate(
      "getComputedStyle(document.documentElement).getPropertyValue('--pf-t--global--color--brand--default').trim()",
    );
    assert.equal(brand, "#8a2be2");
    const sidebar = await page.evaluate(
      "getComputedStyle(document.querySelector('.pf-v6-c-page__sidebar')).backgroundColor",
    );
    assert.equal(sidebar, "rgb(27, 58, 87)");
    await page.locator(".vcp-top-end").getByRole("link", { name: "Handbook" }).waitFor();
    await page.locator(".vcp-bottom-end").getByRole("link", { name: "Status" }).waitFor();
    const csp = String(
      (await call(platform, "GET", "/users", { accept: "text/html" })).headers["content-security-policy"],
    );
    assert.match(csp, /connect-src 'self' https:\/\/cdn\.example\.com(;|$)/);
    assert.match(csp, /img-src 'self' data: https:\/\/cdn\.example\.com(;|$)/);
    assert.doesNotMatch(csp, /connect-src[^;]* https:(;| |$)/, "with block, no address outside the allow list");
    await page.locator("td", { hasText: "Alice L." }).waitFor();
    await check("users-branded");
  });

  it("says how to turn audit on, then searches the audit datastore's events", async () => {
    await page.getByRole("link", { name: "Audit" }).click();
    await page.getByRole("heading", { name: "Audit", exact: true }).waitFor();
    await page.getByText("Audit is off").waitFor();
    await check("audit-off");

    // Audit on (the branding stays): a user created after that is found by name, with who did it and the code.
    const logo = `${platform.url}/assets/favicon.svg`;
    const raw = `${brandedConfig(logo, "<p>Use is <b>monitored</b>.</p>")}audit:\n  enabled: true\n  level: 1\n  path: audit.log\n`;
    const saved = await admin("PATCH", `${API}/configs/platform-config`, { spec: { raw } });
    assert.equal(saved.status, 200, saved.text());
    // The Config applies asynchronously: the user is made once requests are recorded.
    const events = async (selector: string) =>
      (await admin("GET", `${API}/auditevents?fieldSelector=${encodeURIComponent(selector)}`)).json().items.length;
    await waitFor(async () => (await events("verb=list")) > 0, "audit to record requests");
    const created = await admin("POST", `${API}/users`, {
      apiVersion: V1,
      kind: "User",
      metadata: { name: "audited-user" },
      spec: { username: "audited-user" },
    });
    assert.equal(created.status, 201, created.text());
    // Events reach the datastore in batches: the page is searched once the create is there.
    await waitFor(async () => (await events("objectRef.name=audited-user,verb=create")) > 0, "the create's event");
    await page.reload();
    await page.getByRole("heading", { name: "Audit", exact: true }).waitFor();
    assert.equal(await page.getByText("Audit is off").count(), 0);
    await page.getByLabel("Name", { exact: true }).fill("audited-user");
    await page.getByLabel("Verb", { exact: true }).fill("create");
    await page.getByRole("button", { name: "Search" }).click();
    const row = page.getByRole("row").filter({ hasText: "audited-user" });
    await row.first().waitFor();
    const cells = await row.first().locator("td").allInnerTexts();
    assert.deepEqual(cells.slice(1, 6), ["admin", "create", "users", "audited-user", "201"]);
    assert.match(cells[6], /ResponseComplete/, "its stages");
    await check("audit");
  });

  it("shows the profile", async () => {
    await page.goto(`${platform.url}/profile`);
    await page.getByRole("heading", { name: "Profile" }).waitFor();
    await check("profile");
  });

  it("works in a narrow window", async () => {
    await page.setViewportSize({ width: 420, height: 800 });
    try {
      await page.goto(`${platform.url}/users`);
      await page.getByRole("heading", { name: "Users" }).waitFor();
      await page.getByRole("button", { name: "Main navigation" }).waitFor();
      await check("users-narrow");
      await page.getByRole("button", { name: "Main navigation" }).click();
      await page.getByRole("link", { name: "Teams" }).click();
      await page.getByRole("heading", { name: "Teams" }).waitFor();
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("logs out, and an ended session sends the browser back to the login page", async () => {
    const before = (await sessionCookie())?.value;
    // The page's watches are open before logging out: no call of the page is in flight to be refused meanwhile
    // and race the logout's own navigation (net::ERR_ABORTED on a loaded machine).
    const watching = (resource: string) =>
      page.waitForResponse((r) => r.url().includes(`/${resource}?`) && r.url().includes("watch=1") && r.ok());
    let watches = Promise.all([watching("users"), watching("teams")]);
    await page.goto(`${platform.url}/users`);
    await watches;
    await page.getByRole("button", { name: "Admin", exact: true }).click();
    await page.getByRole("menuitem", { name: "Log out" }).click();
    // The login page, without a return path: the watches the platform ends with the session list nothing more.
    await page.waitForURL((url) => url.pathname === "/login" && url.search === "");
    assert.equal(await sessionCookie(), undefined, "the cookie is gone");
    const stale = await call(platform, "GET", `${API}/users`, {
      cookie: `vcp_session=${before}`,
      "x-platform-console": "1",
    });
    assert.equal(stale.status, 401, "the Login key was deleted");

    // A key that ends while the page is open: the page goes back to login at once, and back again after it.
    await login(page, "admin", adminPassword);
    await page.waitForURL((url) => url.pathname === "/");
    // The Teams page's watches (teams, users) are open before the key goes: no call of this page is in flight.
    watches = Promise.all([watching("teams"), watching("users")]);
    await page.getByRole("link", { name: "Teams" }).click();
    await watches;
    const current = (await sessionCookie())?.value ?? "";
    const self = await call(
      platform,
      "POST",
      `${API}/selves`,
      { authorization: `Bearer ${current}` },
      { apiVersion: V1, kind: "Self", spec: {} },
    );
    const keyName = self.json().status.accessKey;
    assert.equal((await admin("DELETE", `${API}/ownedaccesskeys/${keyName}`)).status, 200);
    // The platform ends the page's open watches with the key; their next list is refused, and the console goes to
    // the login page once, however many calls fail together, and back to the Teams page after it.
    await page.waitForURL(/\/login\?return=%2Fteams$/);
    await login(page, "admin", adminPassword);
    await page.waitForURL((url) => url.pathname === "/teams");
  });

  it("returns only to paths of the platform after login", async () => {
    // Off the console first: a console page whose session ends navigates to the login page by itself, which would
    // race the navigation below.
    await page.goto("about:blank");
    await context.clearCookies();
    await page.goto(`${platform.url}/login?return=${encodeURIComponent("//evil.example.com/x")}`);
    await login(page, "admin", adminPassword);
    await page.waitForURL((url) => url.host === new URL(platform.url).host && url.pathname === "/");
    await page.goto("about:blank");
    await context.clearCookies();
    await page.goto(`${platform.url}/login?return=${encodeURIComponent("/oidc/auth?client_id=x")}`);
    await login(page, "admin", adminPassword);
    await page.waitForURL((url) => url.pathname === "/oidc/auth" && url.search === "?client_id=x");
  });

  it("shows secrets as <redacted> and keeps them on save; read-only with a notice under disableConfigEndpoint", async () => {
    await context.clearCookies();
    await page.goto(`${platform.url}/login?return=%2Fconfig`);
    await login(page, "admin", adminPassword);
    await page.waitForURL((url) => url.pathname === "/config");
    const secretConfig =
      "auth:\n  oidc:\n    issuerUrl: https://idp.example.com\n    clientId: platform\n    clientSecret: s3cret-value\n";
    assert.equal((await admin("PATCH", `${API}/configs/platform-config`, { spec: { raw: secretConfig } })).status, 200);
    await page.reload();
    const editor = page.getByRole("textbox", { name: "Platform config (YAML)" });
    await editor.waitFor();
    const shown = await editor.inputValue();
    assert.match(shown, /clientSecret: "?<redacted>"?/);
    assert.doesNotMatch(shown, /s3cret-value/);
    await editor.fill(`${shown}disableConfigEndpoint: true\n`);
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Config saved").waitFor();
    await page.reload();
    await page.getByText("The Config is read-only here").waitFor();
    assert.equal(await editor.getAttribute("readonly"), "");
    assert.equal(await page.getByRole("button", { name: "Save" }).count(), 0);
    await check("config-read-only");
    // The secret was kept (the platform still has it: the oidc connector is listed and configured).
    const info = (await call(platform, "GET", "/auth/info")).json();
    assert.deepEqual(
      info.connectors.map((c: { id: string }) => c.id),
      ["oidc"],
    );
  });

  it("raised no page error and no CSP violation of its own", () => {
    assert.deepEqual(problems, []);
  });
});
