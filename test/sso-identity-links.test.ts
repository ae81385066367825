// Who a single sign-on login is, attacked from every provider the platform speaks to (issue 29): identity providers
// that lie. A login reaches an account only through its own connector's subject (`sso:<connector>:<provider id>`);
// usernames, code-host logins, non-persistent SAML NameIDs, e-mail and display names are never keys. Each attack
// below lands in a new account or is refused, never in an existing one; the admin's explicit link then works.
// Real HTTPS throughout: an `oidc-provider` IdP with per-login claims, a SAML IdP signing with xml-crypto, and the
// code-host and Microsoft-shaped stand-ins reached through the connector's test endpoints.

import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { formsOf, type Page, TestBrowser } from "./support/browser.ts";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  type CodeHostAPerson,
  type FakeProvider,
  IDP_B_TENANT,
  type IdpBPerson,
  startCodeHostA,
  startIdpB,
} from "./support/fake-providers.ts";
import { send } from "./support/https-json.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "./support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type SamlTestIdp, startSamlTestIdp } from "./support/saml-test-idp.ts";
import { adminGet, cookieValue, MGMT, setPlatformConfig, tempFile } from "./support/sso-platform.ts";
import { type TestTls, testTls } from "./support/test-ca.ts";
import { waitFor } from "./support/wait-for.ts";

const ATTACKER_TENANT = "0badc0de-0000-4000-8000-000000000666";
const NAME_ID = "urn:oasis:names:tc:SAML:";

/** What a login ended in: refused (no key), or the account its Login key belongs to. */
interface Outcome {
  page: Page;
  key?: string;
  user?: { name: string; username: string };
}

describe("identity links: a login reaches an account only through its connector's subject", () => {
  let tls: TestTls;
  let platform: PlatformProcess;
  let provider: OidcTestProvider;
  let idp: SamlTestIdp;
  let codeHostA: FakeProvider<CodeHostAPerson>;
  let idpB: FakeProvider<IdpBPerson>;
  let caFile: string;
  /** Every user that existed before the attack under way: none of them may be reached. */
  let existing = new Set<string>();

  const client = (id: string, indent = "    ") =>
    `${indent}clientId: ${CLIENT_ID}\n${indent}clientSecret: ${CLIENT_SECRET}\n${indent}redirectURI: ${platform.url}/auth/${id}/callback\n`;
  const oidcBlock = (id: string, indent: string) =>
    oidcBlockYaml(provider, { callbackUrl: `${platform.url}/auth/${id}/callback`, caFile, indent });

  /** Every connector at once: oidc, a second OIDC connector on the same provider, SAML, codeHostA and idpB. */
  const config = (options: { idpB?: string; auth?: string } = {}) => `auth:
  oidc:
${oidcBlock("oidc", "    ")}  saml:
    ssoURL: ${idp.ssoUrl}
    redirectURI: ${platform.url}/auth/saml/callback
    caData: ${Buffer.from(idp.signingCertPem).toString("base64")}
    ssoIssuer: ${idp.issuer}
    usernameAttr: uid
    emailAttr: mail
  codeHostA:
${client("codeHostA")}    hostName: ${new URL(codeHostA.origin).host}
    rootCA: ${caFile}
  idpB:
${client("idpB")}${options.idpB ?? `    tenant: ${IDP_B_TENANT.name}\n`}  connectors:
  - id: corp
    displayName: Corporate login
    oidc:
${oidcBlock("corp", "      ")}${options.auth ?? ""}`;

  async function whoIs(key: string): Promise<{ name: string; username: string }> {
    const self = await send(platform, "POST", `${MGMT}/selves`, {
      token: key,
      body: { apiVersion: "management.platform.sh/v1", kind: "Self" },
    });
    assert.equal(self.status, 201, self.body);
    const user = self.json().status.user;
    return { name: user.name, username: user.username };
  }

  async function outcome(browser: TestBrowser, page: Page): Promise<Outcome> {
    const key = await cookieValue(browser.jar, `${platform.url}/`, "vcp_session");
    if (!key) return { page };
    return { page, key, user: await whoIs(key) };
  }

  /** A login at the OIDC test provider as `account` (its sub), through connector `id`. */
  async function oidcLogin(account: string, id = "oidc"): Promise<Outcome> {
    const browser = new TestBrowser([platform.caPem, provider.tls.caPem]);
    let page = await browser.navigate(`${platform.url}/auth/${id}/login`);
    assert.equal(page.status, 200, page.body.slice(0, 300));
    page = await browser.submit(page, { login: account, password: "anything" });
    if (page.url.startsWith(provider.issuer) && formsOf(page).length > 0) page = await browser.submit(page);
    return outcome(browser, page);
  }

  /** A login at the OIDC test provider stopped just before the platform's callback: the browser and that address. */
  async function oidcUpToCallback(account: string): Promise<{ browser: TestBrowser; callback: string }> {
    const browser = new TestBrowser([platform.caPem, provider.tls.caPem]);
    let page = await browser.navigate(`${platform.url}/auth/oidc/login`);
    page = await browser.submit(page, { login: account, password: "anything" });
    let response: Omit<Page, "trail"> = page;
    if (page.url.startsWith(provider.issuer) && formsOf(page).length > 0) {
      const form = formsOf(page)[0];
      response = await browser.fetch(form.action, { form: form.fields });
    }
    let location = String(response.headers.location ?? "");
    while (location && !location.startsWith(platform.url)) {
      response = await browser.fetch(new URL(location, provider.issuer).toString());
      location = String(response.headers.location ?? "");
    }
    assert.ok(location.startsWith(`${platform.url}/auth/oidc/callback`), location);
    return { browser, callback: location };
  }

  async function samlLogin(): Promise<Outcome> {
    const browser = new TestBrowser([platform.caPem, idp.tls.caPem]);
    const toIdp = await browser.navigate(`${platform.url}/auth/saml/login`);
    assert.equal(toIdp.status, 200, toIdp.body);
    const fromIdp = await browser.submit(toIdp);
    return outcome(browser, await browser.submit(fromIdp));
  }

  async function fakeLogin(id: string): Promise<Outcome> {
    const browser = new TestBrowser([platform.caPem, tls.caPem]);
    return outcome(browser, await browser.navigate(`${platform.url}/auth/${id}/login`));
  }

  async function userNames(): Promise<Set<string>> {
    const list = await adminGet(platform, "users");
    return new Set(list.json.items.map((u: { metadata: { name: string } }) => u.metadata.name));
  }

  /** The login made a new account: none of the users that existed before. */
  function assertNewAccount(result: Outcome): { name: string; username: string } {
    assert.equal(result.page.status, 200, result.page.body.slice(0, 500));
    assert.ok(result.user, "a Login key");
    assert.ok(!existing.has(result.user.name), `the login reached the existing user ${result.user.name}`);
    return result.user;
  }

  function assertRefused(result: Outcome, pattern: RegExp): void {
    assert.equal(result.key, undefined, `a refused login got a key for ${result.user?.name}`);
    assert.equal(result.page.status, 403, result.page.body.slice(0, 500));
    assert.match(result.page.body, pattern);
  }

  const adminPatch = (path: string, body: unknown) =>
    send(platform, "PATCH", `${MGMT}/${path}`, {
      token: platform.adminKey,
      body,
      contentType: "application/merge-patch+json",
    });

  before(async () => {
    tls = await testTls("identity link providers");
    [codeHostA, idpB, idp] = await Promise.all([startCodeHostA(tls), startIdpB(tls), startSamlTestIdp()]);
    caFile = await tempFile("providers-ca.pem", tls.caPem);
    platform = await startPlatformProcess({
      env: {
        NODE_EXTRA_CA_CERTS: caFile,
        VIRTUALCLUSTER_SSO_TEST_ENDPOINTS: JSON.stringify({
          "https://login.microsoftonline.com": idpB.origin,
          "https://graph.microsoft.com": idpB.origin,
        }),
      },
    });
    provider = await startOidcTestProvider({
      redirectUris: [`${platform.url}/auth/oidc/callback`, `${platform.url}/auth/corp/callback`],
    });
    caFile = await tempFile("all-providers-ca.pem", `${tls.caPem}\n${provider.tls.caPem}`);
    await setPlatformConfig(platform, config());
    // Local users made through the API: subject and username default to the name; some have an e-mail.
    for (const [name, email] of [
      ["carol", undefined],
      ["bob", "bob@example.com"],
      ["dora", "dora@example.com"],
      ["erik", "erik@example.com"],
    ] as const) {
      const made = await send(platform, "POST", `${MGMT}/users`, {
        token: platform.adminKey,
        body: {
          apiVersion: "management.platform.sh/v1",
          kind: "User",
          metadata: { name },
          spec: email ? { email } : {},
        },
      });
      assert.equal(made.status, 201, made.body);
    }
    assert.equal((await adminPatch("users/admin", { spec: { email: "admin@corp.example" } })).status, 200);
  });
  after(async () => {
    await platform?.stop();
    await Promise.all([provider, idp, codeHostA, idpB].map((server) => server?.close()));
  });
  beforeEach(async () => {
    existing = await userNames();
  });

  describe("OIDC: the rows of the report", () => {
    it('{"sub":"attacker-777","preferred_username":"admin"} lands in a new account that cannot grant itself admin', async () => {
      provider.accounts.set("attacker-777", { preferred_username: "admin" });
      const result = await oidcLogin("attacker-777");
      const user = assertNewAccount(result);
      assert.notEqual(user.username, "admin", "no second user may be named admin");
      const created = await adminGet(platform, `users/${user.name}`);
      assert.equal(created.json.spec.subject, "sso:oidc:attacker-777");
      const grab = await send(platform, "POST", `${MGMT}/users`, {
        token: result.key,
        body: {
          apiVersion: "management.platform.sh/v1",
          kind: "User",
          metadata: { name: "attacker-admin" },
          spec: { clusterRoles: [{ name: "admin" }] },
        },
      });
      assert.equal(grab.status, 403, grab.body);
      // The admin's password login still finds the admin (no second user shares its username).
      const password = await send(platform, "POST", "/auth/password/login", {
        body: { username: "admin", password: "wrong" },
      });
      assert.equal(password.status, 401, password.body);
    });

    it('{"sub":"carol"} and nothing else does not reach carol, whose subject is her name', async () => {
      provider.accounts.set("carol", {});
      assertNewAccount(await oidcLogin("carol"));
    });

    it('{"sub":"x","email":"bob@example.com"} without email_verified does not reach bob; the e-mail stays unverified', async () => {
      provider.accounts.set("x", { email: "bob@example.com" });
      const user = assertNewAccount(await oidcLogin("x"));
      const stored = (await adminGet(platform, `users/${user.name}`)).json;
      assert.equal(stored.spec.email, "bob@example.com");
      assert.equal(stored.spec.verifiedEmail, undefined);
    });

    for (const [what, verified, email] of [
      ["false", false, "dora@example.com"],
      ['"true" as a string', "true", "erik@example.com"],
    ] as const) {
      it(`email_verified ${what} with a user's e-mail does not reach that user and is not verified`, async () => {
        const sub = `mail-${String(verified)}`;
        provider.accounts.set(sub, { email, email_verified: verified });
        const user = assertNewAccount(await oidcLogin(sub));
        assert.equal((await adminGet(platform, `users/${user.name}`)).json.spec.verifiedEmail, undefined);
      });
    }

    it("email_verified true is recorded as a verified e-mail, and still links nothing", async () => {
      provider.accounts.set("verified-bob", { email: "bob@example.com", email_verified: true });
      const user = assertNewAccount(await oidcLogin("verified-bob"));
      const stored = (await adminGet(platform, `users/${user.name}`)).json;
      assert.equal(stored.spec.verifiedEmail, "bob@example.com");
    });

    it("a renamed account (new preferred_username) keeps its account; its old name given to another lands elsewhere", async () => {
      provider.accounts.set("renamer", { preferred_username: "dana" });
      const first = assertNewAccount(await oidcLogin("renamer"));
      provider.accounts.set("renamer", { preferred_username: "dana-renamed" });
      existing = await userNames();
      const again = await oidcLogin("renamer");
      assert.equal(again.user?.name, first.name, "the same subject is the same account");
      provider.accounts.set("someone-else", { preferred_username: "dana" });
      assertNewAccount(await oidcLogin("someone-else"));
    });

    it("two first logins of one identity at the same moment make one account, and both reach it", async () => {
      provider.accounts.set("double-click", { preferred_username: "double" });
      const [first, second] = await Promise.all([oidcUpToCallback("double-click"), oidcUpToCallback("double-click")]);
      const pages = await Promise.all([first, second].map(({ browser, callback }) => browser.navigate(callback)));
      const outcomes = await Promise.all([
        outcome(first.browser, { ...pages[0] }),
        outcome(second.browser, { ...pages[1] }),
      ]);
      const [a, b] = outcomes.map(assertNewAccount);
      assert.equal(a.name, b.name);
      const linked = (await adminGet(platform, "users")).json.items.filter(
        (u: { spec: { subject?: string } }) => u.spec.subject === "sso:oidc:double-click",
      );
      assert.equal(linked.length, 1);
    });

    it("a second connector asserting the same subject lands in its own account", async () => {
      provider.accounts.set("shared-sub", { preferred_username: "shared" });
      const viaOidc = assertNewAccount(await oidcLogin("shared-sub", "oidc"));
      existing = await userNames();
      const viaCorp = assertNewAccount(await oidcLogin("shared-sub", "corp"));
      assert.notEqual(viaCorp.name, viaOidc.name);
      assert.equal((await adminGet(platform, `users/${viaCorp.name}`)).json.spec.subject, "sso:corp:shared-sub");
    });

    it("a subject that is the qualified subject of another connector's user stays in its own connector", async () => {
      provider.accounts.set("sso:corp:shared-sub", {});
      const user = assertNewAccount(await oidcLogin("sso:corp:shared-sub"));
      assert.equal((await adminGet(platform, `users/${user.name}`)).json.spec.subject, "sso:oidc:sso:corp:shared-sub");
    });
  });

  describe("SAML: only a persistent NameID identifies, scoped to the IdP's entity id", () => {
    beforeEach(() => {
      idp.behaviour = { sign: "assertion" };
    });

    it("a validly signed assertion with the persistent NameID admin lands in a new account", async () => {
      idp.user = { nameId: "admin", attributes: { uid: ["admin"], mail: ["admin@corp.example"] } };
      const user = assertNewAccount(await samlLogin());
      assert.notEqual(user.username, "admin");
      const stored = (await adminGet(platform, `users/${user.name}`)).json;
      assert.equal(stored.spec.subject, `sso:saml:${idp.issuer}|admin`);
      assert.equal(stored.spec.verifiedEmail, undefined, "a SAML attribute is not a verified e-mail");
    });

    for (const format of [
      `${NAME_ID}1.1:nameid-format:emailAddress`,
      `${NAME_ID}1.1:nameid-format:unspecified`,
      `${NAME_ID}2.0:nameid-format:transient`,
      `${NAME_ID}1.1:nameid-format:X509SubjectName`,
      `${NAME_ID}2.0:nameid-format:entity`,
      null,
    ]) {
      it(`a NameID admin of format ${format?.split(":").pop() ?? "(none)"} is refused`, async () => {
        idp.user = { nameId: "admin", nameIdFormat: format, attributes: { uid: ["admin"] } };
        assertRefused(await samlLogin(), /persistent NameID/);
      });
    }
  });

  describe("codeHostA: the numeric account id identifies, never the renamable login", () => {
    it("an account renamed to admin keeps its own account; another account named admin gets a new one", async () => {
      codeHostA.people.set("hank", { id: 4101, emails: [], orgs: [], teams: [] });
      codeHostA.next = "hank";
      const hank = assertNewAccount(await fakeLogin("codeHostA"));
      assert.equal((await adminGet(platform, `users/${hank.name}`)).json.spec.subject, "sso:codeHostA:4101");
      // The same account, renamed to admin at the code host.
      codeHostA.people.set("admin", { id: 4101, emails: [], orgs: [], teams: [] });
      codeHostA.next = "admin";
      existing = await userNames();
      assert.equal((await fakeLogin("codeHostA")).user?.name, hank.name);
      // Another account that took the name admin.
      codeHostA.people.set("admin", {
        id: 9999,
        emails: [{ email: "admin@corp.example", primary: true, verified: true }],
        orgs: [],
        teams: [],
      });
      existing = await userNames();
      const other = assertNewAccount(await fakeLogin("codeHostA"));
      assert.notEqual(other.username, "admin");
    });
  });

  describe("idpB: the object id within its tenant identifies; shared tenants need an allow-list", () => {
    before(() => {
      // The attacker's own tenant, whose admin set `mail` to the platform admin's address.
      idpB.people.set("mallory@attacker.example", {
        id: "7e57-0001",
        tid: ATTACKER_TENANT,
        displayName: "Mallory",
        mail: "admin@corp.example",
        groups: [],
      });
      idpB.people.set("olga@corp.example.com", { id: "7e57-0002", displayName: "Olga", groups: [] });
      idpB.next = "mallory@attacker.example";
    });
    after(async () => setPlatformConfig(platform, config()));

    it("the default tenant (common) is refused until the Config lists tenants or allows any", async () => {
      await setPlatformConfig(platform, config({ idpB: "" }));
      assertRefused(await fakeLogin("idpB"), /allowedTenants/);
    });

    it("a tenant outside allowedTenants is refused", async () => {
      await setPlatformConfig(platform, config({ idpB: `    allowedTenants: [${IDP_B_TENANT.id}]\n` }));
      assertRefused(await fakeLogin("idpB"), /tenant 0badc0de-0000-4000-8000-000000000666 is not allowed/);
      idpB.next = "olga@corp.example.com";
      const olga = assertNewAccount(await fakeLogin("idpB"));
      const stored = (await adminGet(platform, `users/${olga.name}`)).json;
      assert.equal(stored.spec.subject, `sso:idpB:${IDP_B_TENANT.id}/7e57-0002`);
      idpB.next = "mallory@attacker.example";
    });

    it("with allowAllTenants, the attacker's tenant gets a new account; mail is never verified; /auth/info warns", async () => {
      await setPlatformConfig(platform, config({ idpB: "    allowAllTenants: true\n" }));
      const info = (await send(platform, "GET", "/auth/info")).json();
      const entry = info.connectors.find((c: { id: string }) => c.id === "idpB");
      assert.match(entry.warnings.join(" "), /any tenant/);
      // The log line comes from the Config controller, after the write has answered.
      await waitFor(async () => /any tenant/.test(platform.stderr()), "the log's warning about any tenant");
      const user = assertNewAccount(await fakeLogin("idpB"));
      const stored = (await adminGet(platform, `users/${user.name}`)).json;
      assert.equal(stored.spec.subject, `sso:idpB:${ATTACKER_TENANT}/7e57-0001`);
      assert.equal(stored.spec.email, "admin@corp.example");
      assert.equal(stored.spec.verifiedEmail, undefined);
    });
  });

  describe("linking is the admin's explicit act", () => {
    it("disableUserCreation refuses an unlinked login and names the subject to link", async () => {
      await setPlatformConfig(platform, config({ auth: "  disableUserCreation: true\n" }));
      provider.accounts.set("ada-root", {
        preferred_username: "admin",
        email: "admin@corp.example",
        email_verified: true,
      });
      assertRefused(await oidcLogin("ada-root"), /sso:oidc:ada-root/);
    });

    it("the admin sets the qualified subject on an existing user, and the next login reaches it", async () => {
      const linked = await adminPatch("users/admin", { spec: { subject: "sso:oidc:ada-root" } });
      assert.equal(linked.status, 200, linked.body);
      const result = await oidcLogin("ada-root");
      assert.equal(result.page.status, 200, result.page.body.slice(0, 300));
      assert.equal(result.user?.name, "admin");
      // The same identity through the other connector is still someone else (refused here: no creation).
      assertRefused(await oidcLogin("ada-root", "corp"), /sso:corp:ada-root/);
      await setPlatformConfig(platform, config());
    });

    it("an identity linked to two users is refused rather than guessed", async () => {
      assert.equal((await adminPatch("users/carol", { spec: { subject: "sso:oidc:ada-root" } })).status, 200);
      assertRefused(await oidcLogin("ada-root"), /several users are linked to your identity \(sso:oidc:ada-root\)/);
      assert.equal((await adminPatch("users/carol", { spec: { subject: "carol" } })).status, 200);
      assert.equal((await oidcLogin("ada-root")).user?.name, "admin");
    });

    it("a subject in the sso: form must name a connector and an id", async () => {
      for (const subject of ["sso:", "sso:oidc", "sso:oidc:", "sso:bad id:x"]) {
        const reply = await adminPatch("users/carol", { spec: { subject } });
        assert.equal(reply.status, 422, `${subject}: ${reply.body}`);
        assert.match(reply.json().message, /spec\.subject/);
      }
    });

    it("a user made with a username in the sso: form and no subject is refused (it would link by accident)", async () => {
      const reply = await send(platform, "POST", `${MGMT}/users`, {
        token: platform.adminKey,
        body: {
          apiVersion: "management.platform.sh/v1",
          kind: "User",
          metadata: { name: "accidental" },
          spec: { username: "sso:oidc:ada-root" },
        },
      });
      assert.equal(reply.status, 422, reply.body);
      assert.match(reply.json().message, /spec\.subject/);
    });
  });

  describe("a user's own User", () => {
    it("cannot change its own subject, username or verified e-mail; a changed e-mail is unverified", async () => {
      provider.accounts.set("self-editor", { email: "se@example.com", email_verified: true });
      const result = await oidcLogin("self-editor");
      const user = assertNewAccount(result);
      const patch = (spec: Record<string, unknown>) =>
        send(platform, "PATCH", `${MGMT}/users/${user.name}`, {
          token: result.key,
          body: { spec },
          contentType: "application/merge-patch+json",
        });
      for (const spec of [
        { subject: "sso:oidc:ada-root" },
        { username: "admin" },
        { verifiedEmail: "admin@corp.example" },
      ]) {
        const reply = await patch(spec);
        assert.equal(reply.status, 403, `${JSON.stringify(spec)}: ${reply.body}`);
      }
      assert.equal((await patch({ email: "alice@corp.example" })).status, 200);
      const stored = (await adminGet(platform, `users/${user.name}`)).json;
      assert.equal(stored.spec.email, "alice@corp.example");
      assert.equal(stored.spec.verifiedEmail, "se@example.com", "the record names the address that was verified");
    });
  });
});
