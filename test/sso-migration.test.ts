// A store made before identity links (issue 29): single sign-on created users with the provider's raw id as their
// subject. The store is made as that code made it (the same field manager writing the same fields, Login keys that
// name the connector) and without the migration's marker; the next start qualifies exactly those users' subjects,
// logging each once, so their next login reaches the same account, and links nothing else.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import { formsOf, TestBrowser } from "./support/browser.ts";
import { send } from "./support/https-json.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "./support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { adminGet, cookieValue, MGMT, setPlatformConfig, tempFile } from "./support/sso-platform.ts";

const OLD_SSO_MANAGER = "virtualcluster-platform-sso";
const MARKER = "/internal/migrations/sso-qualified-subjects";
const V1 = "management.platform.sh/v1";

describe("stores made before identity links", { skip: process.env.VCP_TEST_STORE === "etcd" }, () => {
  let platform: PlatformProcess;
  let provider: OidcTestProvider;
  let dataDir = "";
  let adminKey = "";

  /** What the old code wrote at a first login: the user, then a Login key naming the connector. */
  async function oldSsoUser(name: string, subject: string, connector?: string): Promise<void> {
    const user = await send(platform, "POST", `${MGMT}/users?fieldManager=${OLD_SSO_MANAGER}`, {
      token: adminKey,
      body: {
        apiVersion: V1,
        kind: "User",
        metadata: { name },
        spec: { username: name, subject, displayName: name, email: `${name}@example.com`, ssoGroups: [] },
      },
    });
    assert.equal(user.status, 201, user.body);
    if (!connector) return;
    const key = await send(platform, "POST", `${MGMT}/ownedaccesskeys?fieldManager=${OLD_SSO_MANAGER}`, {
      token: adminKey,
      body: {
        apiVersion: V1,
        kind: "OwnedAccessKey",
        metadata: { generateName: "login-" },
        spec: {
          type: "Login",
          user: name,
          displayName: "OpenID Connect login",
          identity: { userId: subject, username: name, groups: [], connector },
        },
      },
    });
    assert.equal(key.status, 201, key.body);
  }

  async function localUser(name: string, spec: Record<string, unknown>): Promise<void> {
    const made = await send(platform, "POST", `${MGMT}/users`, {
      token: adminKey,
      body: { apiVersion: V1, kind: "User", metadata: { name }, spec },
    });
    assert.equal(made.status, 201, made.body);
  }

  async function login(account: string, connector = "oidc"): Promise<string> {
    const browser = new TestBrowser([platform.caPem, provider.tls.caPem]);
    let page = await browser.navigate(`${platform.url}/auth/${connector}/login`);
    page = await browser.submit(page, { login: account, password: "x" });
    if (page.url.startsWith(provider.issuer) && formsOf(page).length > 0) page = await browser.submit(page);
    assert.equal(page.status, 200, page.body.slice(0, 300));
    const key = await cookieValue(browser.jar, `${platform.url}/`, "vcp_session");
    assert.ok(key);
    const self = await send(platform, "POST", `${MGMT}/selves`, { token: key, body: { apiVersion: V1, kind: "Self" } });
    return self.json().status.user.name;
  }

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-sso-migration-"));
    platform = await startPlatformProcess({ dataDir });
    adminKey = platform.adminKey;
  });
  after(async () => {
    await platform?.stop();
    await provider?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Both connectors, pointing at the test provider (its redirect URIs follow the platform's port of this start). */
  async function configureProvider(): Promise<void> {
    await provider?.close();
    provider = await startOidcTestProvider({
      redirectUris: [`${platform.url}/auth/oidc/callback`, `${platform.url}/auth/corp/callback`],
    });
    for (const sub of ["248289761001", "b-42", "x-1", "carol", "admin"]) provider.accounts.set(sub, {});
    const caFile = await tempFile("provider-ca.pem", provider.tls.caPem);
    const block = (id: string, indent: string) =>
      oidcBlockYaml(provider, { callbackUrl: `${platform.url}/auth/${id}/callback`, caFile, indent });
    await setPlatformConfig(
      platform,
      `auth:\n  oidc:\n${block("oidc", "    ")}  connectors:\n  - id: corp\n    oidc:\n${block("corp", "      ")}`,
    );
  }

  it("the first start after the upgrade qualifies the subjects single sign-on wrote, logging each once", async () => {
    await configureProvider();
    await oldSsoUser("alice", "248289761001", "oidc");
    await oldSsoUser("bob", "b-42", "corp");
    // Made by single sign-on, but its keys are gone and two connectors are configured: nobody can tell which.
    await oldSsoUser("dave", "d-7");
    // Local users, one with a subject that looks like a provider id: never linked by the upgrade.
    await localUser("carol", {});
    await localUser("erin", { subject: "x-1" });
    await platform.stop();

    // As before this release: the migration's marker was never written.
    const db = new DatabaseSync(join(dataDir, "platform.db"));
    assert.equal(db.prepare("DELETE FROM kv WHERE name = ?").run(MARKER).changes, 1);
    db.close();

    platform = await startPlatformProcess({ dataDir, env: { LOG_LEVEL: "info" } });
    const subject = async (name: string) => (await adminGet(platform, `users/${name}`)).json.spec.subject;
    assert.equal(await subject("alice"), "sso:oidc:248289761001");
    assert.equal(await subject("bob"), "sso:corp:b-42");
    assert.equal(await subject("dave"), "d-7");
    assert.equal(await subject("carol"), "carol");
    assert.equal(await subject("erin"), "x-1");
    assert.equal((await subject("admin")) ?? "admin", "admin");
    const log = platform.stderr();
    for (const name of ["alice", "bob"]) {
      assert.equal(log.split("\n").filter((line) => line.includes(`"user":"${name}"`)).length, 1, name);
    }
    assert.match(log, /"user":"dave".*stays unlinked/);

    // Kept accounts: the same people log in to the same users; nothing else is reached.
    await configureProvider();
    assert.equal(await login("248289761001"), "alice");
    assert.equal(await login("b-42", "corp"), "bob");
    for (const [account, notUser] of [
      ["x-1", "erin"],
      ["carol", "carol"],
      ["admin", "admin"],
      ["b-42", "bob"],
    ]) {
      assert.notEqual(await login(account), notUser, `${account} must not reach ${notUser}`);
    }

    // Logged once: the next start finds the marker and says nothing about them.
    await platform.stop();
    platform = await startPlatformProcess({ dataDir, env: { LOG_LEVEL: "info" } });
    assert.doesNotMatch(platform.stderr(), /"user":"(alice|bob|dave)"/);
  });
});
