// Single sign-on and the platform's OpenID provider across platform processes on one store (issue 18: nothing that
// must be global lives in one process's memory). Two replicas on one etcd: an OIDC login started on one finishes on
// the other, a SAML login too, and a SAML assertion used on one is refused as a replay on the other; a relying
// party's sign-in moves between replicas at every step (authorization, interaction, code exchange, refresh); wrong
// client secrets sent to both are counted together. On the embedded store, which one process holds at a time, the
// same state outlives a restart: a login started before it finishes after it, and a replay stays refused.

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as client from "openid-client";
import { ensureServingCertificates } from "../src/pki/tls.ts";
import { CLIENT_AUTH_FAILURES_PREFIX } from "../src/platform/shared-login-throttle.ts";
import { openEtcdStore } from "../src/storage/etcd/etcd-store.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { formsOf, type Page, TestBrowser } from "./support/browser.ts";
import { caFetch } from "./support/ca-fetch.ts";
import { send } from "./support/https-json.ts";
import { eventually } from "./support/kubectl.ts";
import { type OidcTestProvider, oidcBlockYaml, startOidcTestProvider } from "./support/oidc-test-provider.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { type SamlTestIdp, startSamlTestIdp } from "./support/saml-test-idp.ts";
import { cookieValue, keyWorks, setPlatformConfig, tempFile } from "./support/sso-platform.ts";

const WIKI = { id: "wiki", secret: "wiki-client-s3cret-0b7e", redirect: "https://wiki.example.test/oauth" };

/** The same URL on another replica (replicas sit behind one name in production; here they differ by port). */
const on = (replica: PlatformProcess, url: string | URL) => {
  const moved = new URL(url);
  const target = new URL(replica.url);
  moved.host = target.host;
  return moved.toString();
};

/** The Config's `auth` block: the OIDC and SAML connectors, their callbacks on `callbackBase`. */
function ssoAuthYaml(provider: OidcTestProvider, idp: SamlTestIdp, caFile: string, callbackBase: string): string {
  return `auth:
  oidc:
${oidcBlockYaml(provider, { callbackUrl: `${callbackBase}/auth/oidc/callback`, caFile, indent: "    " })}  saml:
    ssoURL: ${idp.ssoUrl}
    redirectURI: ${callbackBase}/auth/saml/callback
    caData: ${Buffer.from(idp.signingCertPem).toString("base64")}
    usernameAttr: uid
`;
}

/** Logs in at the OIDC test provider's forms from the page the platform's start sent the browser to. */
async function providerLogin(b: TestBrowser, provider: OidcTestProvider, first: Page, account: string) {
  assert.equal(first.status, 200, first.body.slice(0, 300));
  let page = await b.submit(first, { login: account, password: "anything" });
  if (page.url.startsWith(provider.issuer) && formsOf(page).length > 0) page = await b.submit(page);
  return page;
}

/**
 * Submits a page's form and follows the answers (redirects, and the provider's own forms) with fetch until one
 * sends the browser to `stopAt`; resolves to that address, not fetched.
 */
async function followTo(b: TestBrowser, page: Page, fields: Record<string, string>, stopAt: string): Promise<string> {
  let form = formsOf(page)[0];
  let values: Record<string, string> | undefined = { ...form.fields, ...fields };
  let url = form.action;
  for (let hop = 0; hop < 15; hop++) {
    const answer = await b.fetch(url, values ? { form: values } : {});
    values = undefined;
    const location = answer.headers.location;
    if (typeof location === "string") {
      url = new URL(location, url).toString();
      if (url.startsWith(stopAt)) return url;
      continue;
    }
    form = formsOf({ ...answer, trail: [] })[0];
    assert.ok(form, `no form and no redirect at ${url}: ${answer.status} ${answer.body.slice(0, 300)}`);
    url = form.action;
    values = form.fields;
  }
  throw new Error(`never sent to ${stopAt}`);
}

/** A SAML login: the platform's auto-posting page, the IdP's, then the platform's callback page. */
async function samlLogin(b: TestBrowser, start: string): Promise<Page> {
  const toIdp = await b.navigate(start);
  assert.equal(toIdp.status, 200, toIdp.body);
  const fromIdp = await b.submit(toIdp);
  assert.equal(fromIdp.status, 200, fromIdp.body);
  return b.submit(fromIdp);
}

describe("single sign-on and the OpenID provider on two replicas of one etcd", { skip: etcdMissing() }, () => {
  let cluster: EtcdCluster;
  let root: string;
  let a: PlatformProcess;
  let b: PlatformProcess;
  let adminKey = "";
  let provider: OidcTestProvider;
  let idp: SamlTestIdp;
  let caFile: string;

  const admin = (replica: PlatformProcess): PlatformProcess => ({ ...replica, adminKey });
  const config = (callbackOf: PlatformProcess) => `platformHost: ${new URL(a.url).host}
oidc:
  clients:
  - name: Wiki
    clientId: ${WIKI.id}
    clientSecret: ${WIKI.secret}
    redirectURIs: [${WIKI.redirect}]
${ssoAuthYaml(provider, idp, caFile, callbackOf.url)}`;

  before(async () => {
    cluster = await startEtcdCluster({ members: 1 });
    root = await mkdtemp(join(tmpdir(), "replicas-sso-"));
    const keyFile = join(root, "encryption.key");
    await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const dirs = ["a", "b"].map((name) => join(root, name));
    await mkdir(dirs[0], { mode: 0o700 });
    await ensureServingCertificates({ dataDir: dirs[0], hosts: ["127.0.0.1"] });
    await mkdir(dirs[1], { mode: 0o700 });
    await cp(join(dirs[0], "pki"), join(dirs[1], "pki"), { recursive: true });
    const args = ["--store", "etcd", "--etcd-endpoints", cluster.endpoints.join(","), "--encryption-key-file", keyFile];
    [a, b] = await Promise.all(dirs.map((dataDir) => startPlatformProcess({ dataDir, extraArgs: args })));
    adminKey = a.adminKey || b.adminKey;
    provider = await startOidcTestProvider({
      redirectUris: [`${a.url}/auth/oidc/callback`, `${b.url}/auth/oidc/callback`],
    });
    provider.accounts.set("olga", { email: "olga@example.com", preferred_username: "olga", groups: ["dev"] });
    caFile = await tempFile("provider-ca.pem", provider.tls.caPem);
    idp = await startSamlTestIdp();
    idp.behaviour = { sign: "assertion" };
    idp.user = { nameId: "sam-id", attributes: { uid: ["sam"] } };
    await setPlatformConfig(admin(a), config(b));
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await provider?.close();
    await idp?.close();
    await cluster?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("an OIDC login started on one replica finishes on the other", async () => {
    const browser = new TestBrowser([a.caPem, provider.tls.caPem]);
    // Started on A (state, nonce and PKCE verifier stored); the provider sends the browser back to B's callback.
    const page = await providerLogin(browser, provider, await browser.navigate(`${a.url}/auth/oidc/login`), "olga");
    assert.equal(page.status, 200, page.body);
    assert.ok(
      page.trail.some((url) => url.startsWith(`${b.url}/auth/oidc/callback`)),
      page.trail.join("\n"),
    );
    assert.match(page.body, /logged in to the platform as olga/);
    const key = await cookieValue(browser.jar, `${b.url}/`, "vcp_session");
    assert.ok(key);
    assert.equal(await keyWorks(a, key, "olga"), 200);
    assert.equal(await keyWorks(b, key, "olga"), 200);
  });

  it("a SAML login started on one replica finishes on the other, and its assertion is a replay on both", async () => {
    const browser = new TestBrowser([a.caPem, idp.tls.caPem]);
    const page = await samlLogin(browser, `${a.url}/auth/saml/login`);
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /logged in to the platform as sam/);
    const used = idp.lastResponse?.assertionId ?? "";
    assert.ok(used);
    // The same assertion ID in a new login that B starts and A finishes: A knows B saw it.
    await setPlatformConfig(admin(a), config(a));
    idp.behaviour = { sign: "assertion", assertionId: used };
    const replay = await samlLogin(new TestBrowser([a.caPem, idp.tls.caPem]), `${b.url}/auth/saml/login`);
    assert.equal(replay.status, 401, replay.body);
    assert.match(replay.body, /already used \(replay\)/);
    idp.behaviour = { sign: "assertion" };
    await setPlatformConfig(admin(a), config(b));
  });

  it("a relying party's sign-in moves between replicas at every step: authorization, interaction, code, refresh", async () => {
    const browser = new TestBrowser([a.caPem]);
    // The admin's platform session: a Login key made through B.
    const made = await send(admin(b), "POST", "/apis/management.platform.sh/v1/ownedaccesskeys", {
      token: adminKey,
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { generateName: "login-" },
        spec: { type: "Login", user: "admin", displayName: "test session" },
      },
    });
    assert.equal(made.status, 201, made.body);
    await browser.jar.setCookie(`vcp_session=${made.json().spec.key}; Path=/; Secure; HttpOnly`, a.url);

    const fetch = caFetch([a.caPem]);
    const rp = await client.discovery(new URL(`${a.url}/oidc`), WIKI.id, WIKI.secret, undefined, {
      [client.customFetch]: fetch,
    });
    rp[client.customFetch] = fetch;
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const authorize = client.buildAuthorizationUrl(rp, {
      redirect_uri: WIKI.redirect,
      scope: "openid profile",
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    // Each hop of the browser goes to the other replica than the one before.
    const replicas = [a, b];
    let url = authorize.toString();
    let arrived: URL | undefined;
    for (let hop = 0; hop < 10 && !arrived; hop++) {
      const response = await browser.fetch(on(replicas[hop % 2], url));
      assert.equal(
        response.status >= 300 && response.status < 400,
        true,
        `hop ${hop}: ${response.status} ${response.body}`,
      );
      const next = new URL(String(response.headers.location), url);
      if (next.toString().startsWith(WIKI.redirect)) arrived = next;
      url = next.toString();
    }
    assert.ok(arrived, "the browser reached the relying party");
    // The code is exchanged through B, the refresh goes through A (the discovery named A).
    const onB = caFetch([a.caPem]);
    rp[client.customFetch] = (input, init) => onB(on(b, String(input)), init);
    const tokens = await client.authorizationCodeGrant(rp, arrived, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    assert.equal(tokens.claims()?.preferred_username, "admin");
    rp[client.customFetch] = fetch;
    const refreshed = await client.refreshTokenGrant(rp, tokens.refresh_token ?? "");
    assert.ok(refreshed.access_token);
    // The code is spent on every replica.
    rp[client.customFetch] = fetch;
    const again = await client
      .authorizationCodeGrant(rp, arrived, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce })
      .then(
        () => "accepted",
        (error: { error?: string; cause?: { error?: string } }) => error.error ?? error.cause?.error,
      );
    assert.equal(again, "invalid_grant");
  });

  it("wrong client secrets sent to both replicas are counted together", async () => {
    const guess = (replica: PlatformProcess, secret: string) =>
      send(replica, "POST", "/oidc/token", {
        authorization: `Basic ${Buffer.from(`${WIKI.id}:${secret}`).toString("base64")}`,
        body: "grant_type=refresh_token&refresh_token=not-a-refresh-token",
        contentType: "application/x-www-form-urlencoded",
      });
    for (let i = 0; i < 10; i++) {
      const reply = await guess(i % 2 ? a : b, `guess-${i}`);
      assert.equal(reply.status, 401, reply.body);
    }
    // Five failures on each: the store counts ten, the limit.
    const store = await openEtcdStore({ endpoints: cluster.endpoints });
    try {
      const key = `${CLIENT_AUTH_FAILURES_PREFIX}username/${createHash("sha256").update(WIKI.id).digest("hex")}`;
      await eventually(async () => {
        const record = await store.get(key);
        return record !== undefined && JSON.parse(record.value).failures >= 10;
      }, "ten failures in the store");
    } finally {
      await store.close();
    }
    // Each replica refuses the client once the count reached it by the store's watch. A probe that comes before is
    // one more failure; alone, five failures and three probes would stay below the limit.
    for (const replica of [b, a]) {
      let reply = await guess(replica, "probe-0");
      for (let probe = 1; probe < 3 && reply.status === 401; probe++) reply = await guess(replica, `probe-${probe}`);
      assert.equal(reply.status, 429, reply.body);
      assert.ok(Number(reply.headers["retry-after"]) >= 1);
      assert.equal(reply.json().error, "temporarily_unavailable");
    }
  });
});

describe("single sign-on state across a restart of the embedded store", () => {
  let dataDir: string;
  let platform: PlatformProcess;
  let provider: OidcTestProvider;
  let idp: SamlTestIdp;
  let caFile: string;
  let adminKey = "";

  /** The Config naming this process's callbacks (its port changes with every start). */
  const configure = () =>
    setPlatformConfig({ ...platform, adminKey }, ssoAuthYaml(provider, idp, caFile, platform.url));

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "sso-restart-"));
    platform = await startPlatformProcess({ dataDir });
    adminKey = platform.adminKey;
    provider = await startOidcTestProvider({ redirectUris: [`${platform.url}/auth/oidc/callback`] });
    provider.accounts.set("petra", { email: "petra@example.com", preferred_username: "petra" });
    caFile = await tempFile("provider-ca.pem", provider.tls.caPem);
    idp = await startSamlTestIdp();
    idp.behaviour = { sign: "assertion" };
    idp.user = { nameId: "rita-id", attributes: { uid: ["rita"] } };
    await configure();
  });

  after(async () => {
    await platform?.stop();
    await provider?.close();
    await idp?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Stops the platform and starts another process on its data directory; resolves to the old one's URL. */
  const restart = async () => {
    const old = platform.url;
    await platform.stop();
    platform = await startPlatformProcess({ dataDir });
    return old;
  };

  it("an OIDC login started before a restart finishes after it", async () => {
    const browser = new TestBrowser([platform.caPem, provider.tls.caPem]);
    const atProvider = await browser.navigate(`${platform.url}/auth/oidc/login`);
    assert.equal(atProvider.status, 200, atProvider.body);
    // The platform restarts while the person is at the provider.
    const old = await restart();
    const callback = await followTo(browser, atProvider, { login: "petra", password: "anything" }, `${old}/auth/`);
    assert.ok(callback.startsWith(`${old}/auth/oidc/callback?`), callback);
    // The provider answers the callback the login named (the old port): the same path on the new process.
    const page = await browser.navigate(on(platform, callback));
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /logged in to the platform as petra/);
  });

  it("a SAML assertion used before a restart is a replay after it", async () => {
    await configure();
    const first = await samlLogin(new TestBrowser([platform.caPem, idp.tls.caPem]), `${platform.url}/auth/saml/login`);
    assert.match(first.body, /logged in to the platform as rita/);
    const used = idp.lastResponse?.assertionId ?? "";
    assert.ok(used);
    await restart();
    await configure();
    idp.behaviour = { sign: "assertion", assertionId: used };
    const replay = await samlLogin(new TestBrowser([platform.caPem, idp.tls.caPem]), `${platform.url}/auth/saml/login`);
    assert.equal(replay.status, 401, replay.body);
    assert.match(replay.body, /already used \(replay\)/);
  });
});
