// The code-host and identity-provider connectors against local HTTPS servers that answer those providers'
// documented endpoints (test/support/fake-providers.ts), through the real platform and a browser: codeHostA via
// hostName + rootCA (orgs and teams, org:team groups), codeHostB via baseURL (group allow-list), idpA and idpB via
// the test-only endpoint override (hosted domains and directory groups; tenant, security groups and the groups
// allow-list). Every refusal is a 403 page naming the rule.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TestBrowser } from "./support/browser.ts";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  type CodeHostAPerson,
  type CodeHostBPerson,
  type FakeProvider,
  IDP_B_TENANT,
  type IdpAFake,
  type IdpBPerson,
  startCodeHostA,
  startCodeHostB,
  startIdpA,
  startIdpB,
} from "./support/fake-providers.ts";
import { send } from "./support/https-json.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { adminGet, cookieValue, MGMT, setPlatformConfig, tempFile } from "./support/sso-platform.ts";
import { type TestTls, testTls } from "./support/test-ca.ts";

describe("code host and identity provider connectors", () => {
  let tls: TestTls;
  let platform: PlatformProcess;
  let codeHostA: FakeProvider<CodeHostAPerson>;
  let codeHostB: FakeProvider<CodeHostBPerson>;
  let idpA: IdpAFake;
  let idpB: FakeProvider<IdpBPerson>;
  let serviceAccountFile: string;

  const client = (id: string) =>
    `    clientId: ${CLIENT_ID}\n    clientSecret: ${CLIENT_SECRET}\n    redirectURI: ${platform.url}/auth/${id}/callback\n`;
  /** A login in a fresh browser; a successful one must leave a Login key that works until logout. */
  const login = async (id: string) => {
    const browser = new TestBrowser([platform.caPem, tls.caPem]);
    const page = await browser.navigate(`${platform.url}/auth/${id}/login`);
    const key = await cookieValue(browser.jar, `${platform.url}/`, "vcp_session");
    if (page.status === 200) {
      assert.ok(key, "a Login key cookie");
      const self = await send(platform, "POST", `${MGMT}/selves`, {
        token: key,
        body: { apiVersion: "management.platform.sh/v1", kind: "Self" },
      });
      assert.equal(self.status, 201, self.body);
      const out = await browser.fetch(`${platform.url}/auth/logout`, {
        method: "POST",
        headers: { origin: platform.url },
      });
      assert.equal(out.status, 200);
      assert.equal((await send(platform, "POST", `${MGMT}/selves`, { token: key, body: {} })).status, 401);
    } else {
      assert.equal(key, undefined, "no key after a refusal");
    }
    return page;
  };

  before(async () => {
    tls = await testTls("fake providers");
    [codeHostA, codeHostB, idpA, idpB] = await Promise.all([
      startCodeHostA(tls),
      startCodeHostB(tls),
      startIdpA(tls),
      startIdpB(tls),
    ]);
    const caFile = await tempFile("providers-ca.pem", tls.caPem);
    serviceAccountFile = await tempFile("service-account.json", idpA.serviceAccountJson);
    platform = await startPlatformProcess({
      env: {
        // The providers' fixed addresses lead to the fakes (test only), whose CA the platform trusts.
        NODE_EXTRA_CA_CERTS: caFile,
        VIRTUALCLUSTER_SSO_TEST_ENDPOINTS: JSON.stringify({
          "https://accounts.google.com": idpA.origin,
          "https://admin.googleapis.com": idpA.origin,
          "https://login.microsoftonline.com": idpB.origin,
          "https://graph.microsoft.com": idpB.origin,
        }),
      },
    });
  });
  after(async () => {
    await platform?.stop();
    await Promise.all([codeHostA, codeHostB, idpA, idpB].map((fake) => fake?.close()));
  });

  describe("codeHostA", () => {
    before(async () => {
      codeHostA.people.set("hank", {
        id: 4101,
        name: "Hank Hub",
        emails: [
          { email: "old@example.com", primary: false, verified: true },
          { email: "hank@example.com", primary: true, verified: true },
        ],
        orgs: ["acme", "other"],
        teams: [
          { name: "Platform Team", slug: "platform-team", org: "acme" },
          { name: "Web", slug: "web", org: "other" },
        ],
      });
      codeHostA.people.set("ivy", { id: 4102, emails: [], orgs: ["elsewhere"], teams: [] });
      const rootCA = await tempFile("code-host-ca.pem", tls.caPem);
      await setPlatformConfig(
        platform,
        `auth:\n  codeHostA:\n${client("codeHostA")}    hostName: ${new URL(codeHostA.origin).host}\n    rootCA: ${rootCA}\n    orgs:\n    - name: acme\n      teams: [platform-team]\n    - name: other\n`,
      );
    });

    it("logs in a member of a listed org and team; groups are org:team", async () => {
      codeHostA.next = "hank";
      const page = await login("codeHostA");
      assert.equal(page.status, 200, page.body);
      const user = await adminGet(platform, "users/hank");
      assert.equal(user.json.spec.subject, "sso:codeHostA:4101");
      assert.equal(user.json.spec.email, "hank@example.com");
      assert.deepEqual(user.json.spec.ssoGroups, ["acme:platform-team", "other:web"]);
      const authorize = codeHostA.requests.find((r) => r.path === "/login/oauth/authorize");
      assert.equal(authorize?.query.get("scope"), "user:email read:org");
    });

    it("refuses a user outside the listed orgs", async () => {
      codeHostA.next = "ivy";
      const page = await login("codeHostA");
      assert.equal(page.status, 403);
      assert.match(
        page.body,
        /not a member of the required organizations or teams \(codeHostA orgs: acme \(teams platform-team\); other\)/,
      );
    });
  });

  describe("codeHostB", () => {
    before(async () => {
      codeHostB.people.set("jo", {
        id: 77,
        name: "Jo Lab",
        email: "jo@example.com",
        groups: ["infra", "infra/db", "misc"],
      });
      codeHostB.people.set("kim", { id: 78, email: "kim@example.com", groups: ["misc"] });
      await setPlatformConfig(
        platform,
        `auth:\n  codeHostB:\n${client("codeHostB")}    baseURL: ${codeHostB.origin}\n    groups: [infra, infra/db]\n`,
      );
    });

    it("keeps only the allowed groups", async () => {
      codeHostB.next = "jo";
      const page = await login("codeHostB");
      assert.equal(page.status, 200, page.body);
      const user = await adminGet(platform, "users/jo");
      assert.deepEqual(user.json.spec.ssoGroups, ["infra", "infra/db"]);
      // A group name that is no valid object name still gets a team.
      const teams = (await adminGet(platform, "teams")).json.items.map(
        (t: { metadata: { annotations?: Record<string, string> } }) =>
          t.metadata.annotations?.["management.platform.sh/sso-group"],
      );
      assert.ok(teams.includes("infra/db"));
    });

    it("refuses a user in none of the allowed groups", async () => {
      codeHostB.next = "kim";
      const page = await login("codeHostB");
      assert.equal(page.status, 403);
      assert.match(page.body, /codeHostB groups: infra, infra\/db/);
    });
  });

  describe("idpA", () => {
    before(async () => {
      idpA.people.set("lee", {
        sub: "1180",
        email: "lee@corp.example.com",
        hd: "corp.example.com",
        groups: ["eng@corp.example.com", "all@corp.example.com"],
      });
      idpA.people.set("max", { sub: "1181", email: "max@gmail.example.com", groups: [] });
      idpA.people.set("ned", {
        sub: "1182",
        email: "ned@corp.example.com",
        hd: "corp.example.com",
        groups: ["all@corp.example.com"],
      });
      await setPlatformConfig(
        platform,
        `auth:\n  idpA:\n${client("idpA")}    hostedDomains: [corp.example.com]\n    groups: [eng@corp.example.com, ops@corp.example.com]\n    serviceAccountFilePath: ${serviceAccountFile}\n    adminEmail: ${idpA.adminEmail}\n`,
      );
    });

    it("logs in a user of the hosted domain and reads its groups from the directory", async () => {
      idpA.next = "lee";
      const page = await login("idpA");
      assert.equal(page.status, 200, page.body);
      const authorize = idpA.requests.find((r) => r.path === "/o/oauth2/v2/auth");
      assert.equal(authorize?.query.get("hd"), "corp.example.com");
      assert.equal(authorize?.query.get("scope"), "openid profile email");
      const user = (await adminGet(platform, "users")).json.items.find(
        (u: { spec: { subject?: string } }) => u.spec.subject === "sso:idpA:1180",
      );
      assert.equal(user.spec.username, "lee@corp.example.com");
      assert.deepEqual(user.spec.ssoGroups, ["eng@corp.example.com"]);
      // Both directory pages were read with the service account's token.
      assert.equal(idpA.requests.filter((r) => r.path === "/admin/directory/v1/groups").length, 2);
    });

    it("refuses an account outside the hosted domains", async () => {
      idpA.next = "max";
      const page = await login("idpA");
      assert.equal(page.status, 403);
      assert.match(page.body, /not in an allowed domain \(idpA hostedDomains: corp.example.com\)/);
    });

    it("refuses a user in none of the groups", async () => {
      idpA.next = "ned";
      const page = await login("idpA");
      assert.equal(page.status, 403);
      assert.match(page.body, /idpA groups: eng@corp.example.com, ops@corp.example.com/);
    });
  });

  describe("idpB", () => {
    before(async () => {
      idpB.people.set("olga@corp.example.com", {
        id: "b7c1",
        displayName: "Olga",
        groups: [
          { id: "g1", displayName: "Engineers", security: true },
          { id: "g2", displayName: "Newsletter", security: false },
          { id: "g3", displayName: "Admins", security: true },
        ],
      });
      idpB.people.set("pat@corp.example.com", {
        id: "b7c2",
        displayName: "Pat",
        groups: [{ id: "g2", displayName: "Newsletter", security: false }],
      });
      await setPlatformConfig(
        platform,
        `auth:\n  idpB:\n${client("idpB")}    tenant: corp-tenant\n    groups: [Engineers, Newsletter]\n    onlySecurityGroups: true\n    useGroupsAsWhitelist: true\n`,
      );
    });

    it("logs in through the tenant; security groups only, kept to the configured ones", async () => {
      idpB.next = "olga@corp.example.com";
      const page = await login("idpB");
      assert.equal(page.status, 200, page.body);
      assert.ok(idpB.requests.some((r) => r.path === "/corp-tenant/oauth2/v2.0/authorize"));
      const user = (await adminGet(platform, "users")).json.items.find(
        (u: { spec: { subject?: string } }) => u.spec.subject === `sso:idpB:${IDP_B_TENANT.id}/b7c1`,
      );
      assert.equal(user.spec.username, "olga@corp.example.com");
      assert.deepEqual(user.spec.ssoGroups, ["Engineers"]);
      const memberGroups = idpB.requests.find((r) => r.path === "/v1.0/me/getMemberGroups");
      assert.deepEqual(JSON.parse(memberGroups?.body ?? "{}"), { securityEnabledOnly: true });
    });

    it("refuses a user in none of the required groups", async () => {
      idpB.next = "pat@corp.example.com";
      const page = await login("idpB");
      assert.equal(page.status, 403);
      assert.match(page.body, /idpB groups: Engineers, Newsletter/);
    });
  });
});
