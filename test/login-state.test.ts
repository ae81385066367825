// Login state before authentication (issue 30 item 1), over HTTPS against the real platform with an OIDC and a SAML
// connector and an OpenID client of its own provider: a flood of login starts nobody finishes (single sign-on starts,
// the provider's authorization requests, its logout page) writes nothing to the store, adds nothing to the audit
// log, and leaves the quota to authenticated writes; the state travels sealed in the browser, so a login the
// browser started still finishes and a changed cookie is refused.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { readStoreInfo } from "../src/platform/store-info.ts";
import { AuthClient } from "./support/auth-client.ts";
import { formsOf, TestBrowser } from "./support/browser.ts";
import { eventually } from "./support/kubectl.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "./support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type SamlTestIdp, startSamlTestIdp } from "./support/saml-test-idp.ts";
import { MGMT, setPlatformConfig, tempFile } from "./support/sso-platform.ts";

const WIKI = { id: "wiki", secret: "wiki-client-s3cret-7d1f", redirect: "https://wiki.example.test/oauth" };
const STARTS_PER_KIND = 300;
const QUOTA_BYTES = 1024 * 1024;

describe("login state before authentication", { skip: process.env.VCP_TEST_STORE === "etcd" }, () => {
  let platform: PlatformProcess;
  let provider: OidcTestProvider;
  let idp: SamlTestIdp;
  let client: AuthClient;

  /** The store's revision (one per write) and size, as `platform store-info` reads them from the running platform. */
  const store = async () => {
    const { info } = await readStoreInfo({ dataDir: platform.dataDir });
    assert.ok(info.stats, info.error);
    return info.stats;
  };
  const audit = () => readFile(join(platform.dataDir, "audit", "audit.log"), "utf8").catch(() => "");

  before(async () => {
    // A store quota a flood of stored login states (about 1 KiB each) would pass within the flood.
    platform = await startPlatformProcess({ extraArgs: ["--store-quota-bytes", String(QUOTA_BYTES)] });
    client = new AuthClient(platform.url, platform.caPem);
    provider = await startOidcTestProvider({ redirectUris: [`${platform.url}/auth/oidc/callback`] });
    provider.accounts.set("olga", { email: "olga@example.com", preferred_username: "olga" });
    idp = await startSamlTestIdp();
    idp.behaviour = { sign: "assertion" };
    idp.user = { nameId: "sam-id", attributes: { uid: ["sam"] } };
    const caFile = await tempFile("provider-ca.pem", provider.tls.caPem);
    await setPlatformConfig(
      platform,
      `audit: {enabled: true, level: 1, path: audit.log}
oidc:
  clients:
  - name: Wiki
    clientId: ${WIKI.id}
    clientSecret: ${WIKI.secret}
    redirectURIs: [${WIKI.redirect}]
  - name: CLI
    clientId: cli
auth:
  oidc:
${oidcBlockYaml(provider, { callbackUrl: `${platform.url}/auth/oidc/callback`, caFile, indent: "    " })}  saml:
    ssoURL: ${idp.ssoUrl}
    redirectURI: ${platform.url}/auth/saml/callback
    caData: ${Buffer.from(idp.signingCertPem).toString("base64")}
    usernameAttr: uid
`,
    );
  });

  after(async () => {
    client?.close();
    await platform?.stop();
    await provider?.close();
    await idp?.close();
  });

  it("a flood of login starts writes nothing to the store or the audit log, and authenticated writes go on", async () => {
    const authorize = `/oidc/auth?${new URLSearchParams({
      client_id: WIKI.id,
      response_type: "code",
      scope: "openid profile",
      redirect_uri: WIKI.redirect,
      state: "attacker-state-0123456789",
      nonce: "attacker-nonce-0123456789",
    })}`;
    const kinds = ["/auth/oidc/login?return=%2Fprojects", "/auth/saml/login", authorize, "/oidc/session/end"];
    // A pushed authorization request in a public client's name (which anyone can send): refused, nothing stored.
    const push = () =>
      client.send("POST", "/oidc/request", {
        body: new URLSearchParams({
          client_id: "cli",
          response_type: "code",
          scope: "openid",
          redirect_uri: "http://127.0.0.1:4711/cb",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
        }).toString(),
        contentType: "application/x-www-form-urlencoded",
      });
    const pushed = await push();
    assert.equal(pushed.status, 400, pushed.body);
    assert.match(pushed.json().error_description, /need a client that authenticates/);
    // One of each first: connectors built, the provider's discovery fetched, the Config's status written.
    for (const path of kinds) assert.ok((await client.send("GET", path, { accept: "text/html" })).status < 400, path);
    const first = await store();
    const requests = kinds.flatMap((path) => Array.from({ length: STARTS_PER_KIND }, () => path));
    const statuses = new Map<number, number>();
    for (let at = 0; at < requests.length; at += 16) {
      const replies = await Promise.all(
        requests.slice(at, at + 16).map((path) => client.send("GET", path, { accept: "text/html" })),
      );
      for (const { status } of replies) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      assert.equal((await push()).status, 400);
    }
    assert.deepEqual(
      [...statuses.keys()].sort(),
      [200, 302, 303],
      `every start answered (redirect or page): ${[...statuses]}`,
    );
    // A confidential client that authenticated may push its request.
    const confidential = await client.send("POST", "/oidc/request", {
      authorization: `Basic ${Buffer.from(`${WIKI.id}:${WIKI.secret}`).toString("base64")}`,
      body: new URLSearchParams({
        client_id: WIKI.id,
        response_type: "code",
        scope: "openid",
        redirect_uri: WIKI.redirect,
      }).toString(),
      contentType: "application/x-www-form-urlencoded",
    });
    assert.equal(confidential.status, 201, confidential.body);
    const last = await store();
    // Nothing about the platform changes meanwhile but for the odd housekeeping write; a start that stored its state
    // would add one revision and about a kilobyte each.
    assert.ok(
      last.revision - first.revision < 10,
      `${last.revision - first.revision} writes for ${requests.length} starts`,
    );
    assert.ok(
      last.sizeBytes - first.sizeBytes < 256 * 1024,
      `the store grew by ${last.sizeBytes - first.sizeBytes} bytes`,
    );
    // An authenticated write is never refused for the quota a flood filled.
    const write = await client.send("PATCH", `${MGMT}/users/admin`, {
      token: platform.adminKey,
      body: { metadata: { annotations: { "test/after-flood": "yes" } } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(write.status, 200, write.body);
    // The audit log has that write (so it is flushed) and none of the starts.
    await eventually(
      async () => (await audit()).includes("test/after-flood") || (await audit()).includes('"verb":"patch"'),
      "the write in the audit log",
    );
    const lines = (await audit()).split("\n");
    for (const path of ["/auth/oidc/login", "/auth/saml/login", "/oidc/auth?"]) {
      assert.equal(lines.filter((line) => line.includes(`"requestURI":"${path}`)).length, 0, path);
    }
  });

  it("a login the browser started finishes on its sealed state; a changed or missing state cookie is refused", async () => {
    const browser = new TestBrowser([platform.caPem, provider.tls.caPem]);
    const atProvider = await browser.navigate(
      `${platform.url}/auth/oidc/login?return=${encodeURIComponent("/projects")}`,
    );
    assert.equal(atProvider.status, 200, atProvider.body);
    const cookies = await browser.jar.getCookies(`${platform.url}/auth/oidc/callback`);
    const state = cookies.find((c) => c.key.startsWith("vcp_sso_"));
    assert.ok(state, "the login's state is a cookie of the callback path");
    assert.equal(state.httpOnly, true);
    assert.equal(state.secure, true);
    assert.ok(!state.value.includes("projects"), "sealed: the browser cannot read it");

    // The same login with its cookie changed: refused.
    const tampered = new TestBrowser([platform.caPem, provider.tls.caPem]);
    const value = state.value;
    const flipped = value.slice(0, 20) + (value[20] === "A" ? "B" : "A") + value.slice(21);
    await tampered.jar.setCookie(`${state.key}=${flipped}; Path=/auth/oidc/callback; Secure; HttpOnly`, platform.url);
    let page = await browser.submit(atProvider, { login: "olga", password: "x" });
    if (page.url.startsWith(provider.issuer) && formsOf(page).length > 0) {
      const consent = formsOf(page)[0];
      const answer = await browser.fetch(consent.action, { form: consent.fields });
      page = { ...answer, trail: [] };
    }
    let location = String(page.headers.location ?? "");
    while (location && !location.startsWith(platform.url)) {
      location = String((await browser.fetch(new URL(location, provider.issuer).toString())).headers.location ?? "");
    }
    assert.ok(location.startsWith(`${platform.url}/auth/oidc/callback?`), location);
    const refused = await tampered.fetch(location);
    assert.equal(refused.status, 400, refused.body);
    assert.match(refused.body, /started in another browser/);

    // The browser that started it finishes it, and lands on the return path.
    const done = await browser.fetch(location);
    assert.equal(done.status, 303, done.body);
    assert.equal(done.headers.location, "/projects");
    const session = await browser.jar.getCookies(platform.url);
    assert.ok(session.some((c) => c.key === "vcp_session"));
    assert.ok(!session.some((c) => c.key === state.key), "the state cookie was cleared");
  });

  it("a browser keeps at most three logins in progress and three authorization requests (no cookie bomb)", async () => {
    const browser = new TestBrowser([platform.caPem, provider.tls.caPem]);
    for (let i = 0; i < 6; i++) {
      assert.equal((await browser.fetch(`${platform.url}/auth/oidc/login`)).status, 302);
      const authorize = `${platform.url}/oidc/auth?${new URLSearchParams({
        client_id: WIKI.id,
        response_type: "code",
        scope: "openid",
        redirect_uri: WIKI.redirect,
        state: `s-${i}-0123456789`,
      })}`;
      assert.equal((await browser.fetch(authorize)).status, 303);
    }
    const held = async (url: string, prefix: string) =>
      (await browser.jar.getCookies(url)).filter((c) => c.key.startsWith(prefix)).length;
    assert.equal(await held(`${platform.url}/auth/oidc/callback`, "vcp_sso_"), 3);
    assert.equal(await held(`${platform.url}/oidc/interaction/x`, "vcp_oidc_i_"), 3);
  });

  it("the OpenID provider keeps an authorization request in the browser, and refuses a changed one", async () => {
    const browser = new TestBrowser([platform.caPem]);
    const authorize = `${platform.url}/oidc/auth?${new URLSearchParams({
      client_id: WIKI.id,
      response_type: "code",
      scope: "openid",
      redirect_uri: WIKI.redirect,
      state: "s-0123456789",
    })}`;
    const started = await browser.fetch(authorize);
    assert.equal(started.status, 303, started.body);
    const interaction = new URL(String(started.headers.location), platform.url);
    assert.match(interaction.pathname, /^\/oidc\/interaction\/[\w-]+$/);
    const sealed = (await browser.jar.getCookies(interaction.toString())).find((c) => c.key.startsWith("vcp_oidc_i_"));
    assert.ok(sealed, "the interaction is a cookie");
    // Unchanged, it sends the browser to the login page (no platform session yet).
    const toLogin = await browser.fetch(interaction.toString());
    assert.equal(toLogin.status, 303, toLogin.body);
    assert.match(String(toLogin.headers.location), /^\/login\?return=%2Foidc%2Finteraction%2F/);
    // Changed, it is unknown.
    const value = sealed.value;
    await browser.jar.setCookie(
      `${sealed.key}=${value.slice(0, 30)}${value[30] === "A" ? "B" : "A"}${value.slice(31)}; Path=/oidc; Secure; HttpOnly`,
      platform.url,
    );
    const changed = await browser.fetch(interaction.toString());
    assert.equal(changed.status, 400, changed.body);
    assert.match(changed.body, /unknown or has expired/);
  });
});
