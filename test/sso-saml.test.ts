// SAML login against the real platform over HTTPS, with a test identity provider that signs real responses
// (xml-crypto): a signed response, a signed assertion, a bad signature, a tampered assertion, the wrong audience,
// Destination or Recipient, an expired assertion, a replayed POST and a reused assertion ID, the issuer check,
// allowedGroups with filterGroups and groupsDelim, and the AuthnRequest the platform sends.

import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { type Page, TestBrowser } from "./support/browser.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type SamlTestIdp, startSamlTestIdp } from "./support/saml-test-idp.ts";
import { adminGet, cookieValue, keyWorks, setPlatformConfig, tempFile } from "./support/sso-platform.ts";

describe("SAML login", () => {
  let platform: PlatformProcess;
  let idp: SamlTestIdp;

  const samlConfig = (extra = "") => `auth:
  saml:
    ssoURL: ${idp.ssoUrl}
    redirectURI: ${platform.url}/auth/saml/callback
    caData: ${Buffer.from(idp.signingCertPem).toString("base64")}
    usernameAttr: uid
    emailAttr: mail
    groupsAttr: memberOf
    nameIDPolicyFormat: emailAddress
${extra}`;

  const browser = () => new TestBrowser([platform.caPem, idp.tls.caPem]);

  /** The login through the IdP's auto-posting pages; answers the platform's final page. */
  async function login(b = browser()): Promise<Page> {
    const toIdp = await b.navigate(`${platform.url}/auth/saml/login`);
    assert.equal(toIdp.status, 200, toIdp.body);
    const fromIdp = await b.submit(toIdp);
    assert.equal(fromIdp.status, 200, fromIdp.body);
    return b.submit(fromIdp);
  }

  before(async () => {
    platform = await startPlatformProcess();
    idp = await startSamlTestIdp();
    await setPlatformConfig(platform, samlConfig());
  });
  after(async () => {
    await platform?.stop();
    await idp?.close();
  });
  beforeEach(() => {
    idp.behaviour = { sign: "assertion" };
    idp.user = {
      nameId: "erin-id",
      attributes: { uid: ["erin"], mail: ["erin@example.com"], memberOf: ["dev", "ops"] },
    };
  });

  it("sends an AuthnRequest by HTTP-POST with the ACS URL, issuer and NameID policy", async () => {
    await login();
    const request = idp.lastRequest ?? "";
    assert.match(request, new RegExp(`AssertionConsumerServiceURL="${platform.url}/auth/saml/callback"`));
    assert.match(request, new RegExp(`Destination="${idp.ssoUrl}"`));
    assert.match(request, /Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"/);
    assert.match(request, new RegExp(`<saml:Issuer[^>]*>${platform.url}/auth/saml/callback</saml:Issuer>`));
  });

  it("a signed assertion logs in: user, groups, teams and a working Login key", async () => {
    const b = browser();
    const page = await login(b);
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /logged in to the platform as erin/);
    const user = await adminGet(platform, "users/erin");
    assert.equal(user.json.spec.subject, `sso:saml:${idp.issuer}|erin-id`);
    assert.equal(user.json.spec.email, "erin@example.com");
    assert.deepEqual(user.json.spec.ssoGroups, ["dev", "ops"]);
    assert.deepEqual((await adminGet(platform, "teams/ops")).json.spec.users, ["erin"]);
    const key = await cookieValue(b.jar, `${platform.url}/`, "vcp_session");
    assert.ok(key);
    assert.equal(await keyWorks(platform, key, "erin"), 200);
    const out = await b.submit(await b.navigate(`${platform.url}/auth/logout`));
    assert.equal(out.status, 200);
    assert.equal(await cookieValue(b.jar, `${platform.url}/`, "vcp_session"), undefined);
    assert.equal(await keyWorks(platform, key, "erin"), 401);
  });

  it("a signed response (assertion unsigned) logs in", async () => {
    idp.behaviour = { sign: "response" };
    assert.equal((await login()).status, 200);
  });

  for (const [what, behaviour, message] of [
    ["an unsigned response", { sign: "none" }, /refused: .*signature/i],
    ["a signature by an untrusted key", { sign: "assertion", wrongKey: true }, /refused: .*signature/i],
    ["a signed response altered after signing", { sign: "response", tamper: true }, /refused: .*signature/i],
    ["the wrong audience", { sign: "assertion", audience: "https://someone-else.example.com" }, /audience/i],
    ["the wrong Destination", { sign: "assertion", destination: "https://elsewhere.example.com/acs" }, /Destination/],
    [
      "the wrong Recipient",
      { sign: "assertion", recipient: "https://elsewhere.example.com/acs" },
      /Recipient|subject confirmation/i,
    ],
    [
      "an expired assertion",
      { sign: "assertion", validForMs: -5 * 60_000 },
      /expired|NotOnOrAfter|subject confirmation/i,
    ],
  ] as const) {
    it(`refuses ${what} (401, no user created)`, async () => {
      idp.behaviour = behaviour as SamlTestIdp["behaviour"];
      idp.user.attributes.uid = ["mallory"];
      const page = await login();
      assert.equal(page.status, 401, page.body);
      assert.match(page.body, message);
      assert.equal((await adminGet(platform, "users/mallory")).status, 404);
    });
  }

  it("refuses a replayed POST and a reused assertion ID", async () => {
    const b = browser();
    assert.equal((await login(b)).status, 200);
    const sent = idp.lastResponse!;
    const replay = await b.navigate(sent.acs, {
      form: { SAMLResponse: sent.SAMLResponse, RelayState: sent.RelayState },
    });
    assert.equal(replay.status, 400);
    assert.match(replay.body, /unknown, has expired/);

    idp.behaviour = { sign: "assertion", assertionId: sent.assertionId };
    const reused = await login();
    assert.equal(reused.status, 401);
    assert.match(reused.body, /already used \(replay\)/);
  });

  it("ssoIssuer must match the assertion's issuer", async () => {
    await setPlatformConfig(platform, samlConfig(`    ssoIssuer: ${"https://idp.example.com/other"}\n`));
    const page = await login();
    assert.equal(page.status, 401);
    assert.match(page.body, /not issued by https:\/\/idp.example.com\/other/);
    await setPlatformConfig(platform, samlConfig(`    ssoIssuer: ${idp.issuer}\n`));
    assert.equal((await login()).status, 200);
  });

  it("allowedGroups refuses outsiders (403 page); filterGroups keeps only the allowed; groupsDelim splits", async () => {
    await setPlatformConfig(
      platform,
      samlConfig("    allowedGroups: [admins, dev]\n    filterGroups: true\n    groupsDelim: ','\n"),
    );
    idp.user = {
      nameId: "frank-id",
      attributes: { uid: ["frank"], mail: ["frank@example.com"], memberOf: ["sales,support"] },
    };
    const refused = await login();
    assert.equal(refused.status, 403);
    assert.match(refused.body, /saml allowedGroups: admins, dev/);

    idp.user.attributes.memberOf = ["dev,sales"];
    assert.equal((await login()).status, 200);
    assert.deepEqual((await adminGet(platform, "users/frank")).json.spec.ssoGroups, ["dev"]);
  });

  it("entityIssuer is the Issuer of the request and the audience required", async () => {
    await setPlatformConfig(platform, samlConfig("    entityIssuer: https://platform.example.com/saml\n"));
    assert.equal((await login()).status, 200);
    assert.match(idp.lastRequest ?? "", /<saml:Issuer[^>]*>https:\/\/platform.example.com\/saml<\/saml:Issuer>/);
    idp.behaviour = { sign: "assertion", audience: `${platform.url}/auth/saml/callback` };
    const page = await login();
    assert.equal(page.status, 401);
    assert.match(page.body, /audience.*https:\/\/platform.example.com\/saml/i);
  });

  it("ca may name a CA file: a signing certificate it issued (sent in KeyInfo) is trusted, others are not", async () => {
    const caFile = await tempFile("saml-ca.pem", idp.caCertPem);
    await setPlatformConfig(platform, samlConfig().replace(/caData: .*/, `ca: ${caFile}`));
    idp.behaviour = { sign: "assertion", chained: true };
    assert.equal((await login()).status, 200);
    idp.behaviour = { sign: "assertion" };
    const page = await login();
    assert.equal(page.status, 401);
    assert.match(page.body, /signature/i);
  });

  it("insecureSkipSignatureValidation accepts an unsigned response but keeps every other check", async () => {
    await setPlatformConfig(platform, samlConfig().replace(/caData: .*/, "insecureSkipSignatureValidation: true"));
    idp.behaviour = { sign: "none" };
    assert.equal((await login()).status, 200);
    idp.behaviour = { sign: "none", audience: "https://someone-else.example.com" };
    assert.equal((await login()).status, 401);
    idp.behaviour = { sign: "none", validForMs: -5 * 60_000 };
    assert.equal((await login()).status, 401);
  });
});
