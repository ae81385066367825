// The platform as an OpenID provider (Config status.oidc), end to end over real HTTPS: a real relying party
// (openid-client) and a browser with a cookie jar whose platform session comes from a password login. Discovery,
// the code flow with PKCE, the ID token verified against the JWKS, userinfo, refresh, revocation, RP-initiated
// logout; refusals with the OAuth error the standard names (wrong redirect URI, wrong secret, public client without
// PKCE, wildcard on and off, disabled user, tokenGeneration bump); clients live from the Config; enabled: false;
// wrong client secrets throttled per client (429 + Retry-After); refresh tokens as access keys (spec.oidcProvider).

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import * as client from "openid-client";
import { AuthClient } from "./support/auth-client.ts";
import { TestBrowser } from "./support/browser.ts";
import { capture, send } from "./support/https-json.ts";
import { OidcRelyingParties, oauthError } from "./support/oidc-relying-party.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { adminGet, MGMT, setPlatformConfig } from "./support/sso-platform.ts";
import { waitFor } from "./support/wait-for.ts";

const GRAFANA = {
  id: "grafana",
  secret: "grafana-client-s3cret-9f2c",
  redirect: "https://grafana.example.test/login/generic_oauth",
};
const CLI = { id: "platform-cli" };
const ARGO = { id: "argo", secret: "argo-client-s3cret-77ab", pattern: "https://*.argo.example.test/auth/callback" };
const WIKI = { id: "wiki", secret: "wiki-client-s3cret-51c0", redirect: "https://wiki.example.test/oauth" };

// biome-ignore lint/suspicious/noExplicitAny: tests read claims field by field
type Claims = Record<string, any>;

describe("the platform as an OpenID provider", () => {
  let platform: PlatformProcess;
  let api: AuthClient;
  let rps: OidcRelyingParties;
  let logs: () => string;
  let aliceUid: string;
  /** Secrets the configuration holds (the relying parties remember every token, code and key they saw). */
  const secrets: string[] = [GRAFANA.secret, ARGO.secret, WIKI.secret];
  const signedIn = (username: string, password: string) => rps.signedIn(username, password);
  const authorize = (browser: TestBrowser, url: URL | string) => rps.authorize(browser, url);
  const relyingParty = (id: string, secret?: string) => rps.relyingParty(id, secret);
  const start = (rp: client.Configuration, uri: string, extra?: Record<string, string>) => rps.start(rp, uri, extra);
  const codeFlow = (browser: TestBrowser, rp: client.Configuration, uri: string) => rps.codeFlow(browser, rp, uri);

  const issuer = () => rps.issuer();
  const config = (oidc: string) => `audit: {enabled: true, level: 3, path: audit.log}
oidc:
${oidc}`;
  const clients = (extra = "") => `  clients:
  - name: Grafana
    clientId: ${GRAFANA.id}
    clientSecret: ${GRAFANA.secret}
    redirectURIs: [${GRAFANA.redirect}]
  - name: Platform CLI
    clientId: ${CLI.id}
  - name: Wiki
    clientId: ${WIKI.id}
    clientSecret: ${WIKI.secret}
    redirectURIs: [${WIKI.redirect}]
${extra}`;

  async function jwks(): Promise<JSONWebKeySet> {
    const reply = await send(platform, "GET", "/oidc/jwks");
    assert.equal(reply.status, 200);
    return reply.json();
  }

  before(async () => {
    platform = await startPlatformProcess();
    logs = capture(platform.child.stderr);
    api = new AuthClient(platform.url, platform.caPem);
    rps = new OidcRelyingParties(platform, api);
    await api.createUser(platform.adminKey, "alice", {
      username: "alice",
      displayName: "Alice Example",
      email: "alice@example.com",
    });
    await api.createUser(platform.adminKey, "bob", { username: "bob", email: "bob@example.com" });
    for (const [user, password] of [
      ["alice", "alice-password-1"],
      ["bob", "bob-password-1"],
    ]) {
      const reply = await api.setPassword(platform.adminKey, user, password);
      assert.equal(reply.status, 201, reply.body);
      secrets.push(password);
    }
    await api.createTeam(platform.adminKey, "dev", { users: ["alice"] });
    aliceUid = (await adminGet(platform, "users/alice")).json.metadata.uid;
    await setPlatformConfig(platform, config(clients()));
  });
  after(async () => {
    api?.close();
    await platform?.stop();
  });

  it("discovery names the issuer under /oidc, its endpoints and the platform's key ring as JWKS", async () => {
    const reply = await send(platform, "GET", "/oidc/.well-known/openid-configuration");
    assert.equal(reply.status, 200, reply.body);
    const meta = reply.json();
    assert.equal(meta.issuer, issuer());
    for (const [field, path] of [
      ["authorization_endpoint", "/oidc/auth"],
      ["token_endpoint", "/oidc/token"],
      ["userinfo_endpoint", "/oidc/me"],
      ["revocation_endpoint", "/oidc/token/revocation"],
      ["end_session_endpoint", "/oidc/session/end"],
      ["jwks_uri", "/oidc/jwks"],
    ]) {
      assert.equal(meta[field], `${platform.url}${path}`, field);
    }
    assert.deepEqual(meta.code_challenge_methods_supported, ["S256"]);
    assert.deepEqual(meta.response_types_supported, ["code"]);
    assert.ok(meta.grant_types_supported.includes("refresh_token"));
    for (const claim of ["sub", "preferred_username", "name", "email", "groups"]) {
      assert.ok(meta.claims_supported.includes(claim), claim);
    }
    const ring = (await send(platform, "GET", "/.well-known/jwks.json")).json();
    assert.deepEqual(await jwks(), ring);
    assert.deepEqual(meta.id_token_signing_alg_values_supported, [ring.keys[0].alg]);
  });

  it("code flow with PKCE: the ID token verifies against the JWKS and carries the user's claims; userinfo agrees", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("alice", "alice-password-1");
    const tokens = await codeFlow(browser, rp, GRAFANA.redirect);
    assert.ok(tokens.id_token && tokens.access_token && tokens.refresh_token);
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token, createLocalJWKSet(await jwks()), {
      issuer: issuer(),
      audience: GRAFANA.id,
    });
    assert.equal(protectedHeader.kid, (await jwks()).keys[0].kid);
    const expected = {
      sub: aliceUid,
      preferred_username: "alice",
      name: "Alice Example",
      email: "alice@example.com",
      // Written into spec.email, verified by nobody.
      email_verified: false,
      groups: ["dev"],
    };
    for (const [claim, value] of Object.entries(expected)) assert.deepEqual((payload as Claims)[claim], value, claim);
    const info = await client.fetchUserInfo(rp, tokens.access_token, aliceUid);
    for (const [claim, value] of Object.entries(expected)) assert.deepEqual((info as Claims)[claim], value, claim);
  });

  it("email_verified follows spec.verifiedEmail: true once an admin verifies the address, false when the user changes it", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const claimsNow = async () => {
      const tokens = await codeFlow(await signedIn("bob", "bob-password-1"), rp, GRAFANA.redirect);
      const info = (await client.fetchUserInfo(rp, tokens.access_token, tokens.claims()?.sub ?? "")) as Claims;
      return { token: tokens.claims() as Claims, info };
    };
    const patch = (token: string, spec: Record<string, unknown>) =>
      send(platform, "PATCH", `${MGMT}/users/bob`, {
        token,
        body: { spec },
        contentType: "application/merge-patch+json",
      });
    assert.equal((await patch(platform.adminKey, { verifiedEmail: "bob@example.com" })).status, 200);
    let now = await claimsNow();
    assert.equal(now.token.email_verified, true);
    assert.equal(now.info.email_verified, true);
    // bob claims a colleague's address: his own right, but nobody verified it.
    const bobKey = (await api.login("bob", "bob-password-1")).json().accessKey;
    secrets.push(bobKey);
    assert.equal((await patch(bobKey, { email: "alice@corp.example" })).status, 200);
    assert.equal((await patch(bobKey, { verifiedEmail: "alice@corp.example" })).status, 403);
    now = await claimsNow();
    assert.equal(now.token.email, "alice@corp.example");
    assert.equal(now.token.email_verified, false);
    assert.equal(now.info.email_verified, false);
  });

  it("spec.extraClaims reach the ID token and userinfo; a claim the provider sets itself is refused (422)", async () => {
    const patch = (spec: Record<string, unknown>) =>
      send(platform, "PATCH", `${MGMT}/users/bob`, {
        token: platform.adminKey,
        body: { spec },
        contentType: "application/merge-patch+json",
      });
    assert.equal((await patch({ extraClaims: { department: "finance", cost_center: "cc-7" } })).status, 200);
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const tokens = await codeFlow(await signedIn("bob", "bob-password-1"), rp, GRAFANA.redirect);
    const info = (await client.fetchUserInfo(rp, tokens.access_token, tokens.claims()?.sub ?? "")) as Claims;
    for (const claims of [tokens.claims() as Claims, info]) {
      assert.equal(claims.department, "finance");
      assert.equal(claims.cost_center, "cc-7");
    }
    for (const reserved of ["sub", "email_verified", "iss", "groups"]) {
      const refused = await patch({ extraClaims: { [reserved]: "forged" } });
      assert.equal(refused.status, 422, `${reserved}: ${refused.body}`);
      assert.match(refused.json().message, new RegExp(`spec\\.extraClaims\\.${reserved}`));
    }
  });

  it("a refresh gives new tokens; a revoked refresh token is refused with invalid_grant", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("alice", "alice-password-1");
    const tokens = await codeFlow(browser, rp, GRAFANA.redirect);
    const refreshed = await client.refreshTokenGrant(rp, tokens.refresh_token ?? "");
    assert.ok(refreshed.access_token && refreshed.id_token);
    secrets.push(refreshed.access_token, refreshed.id_token, refreshed.refresh_token ?? "");
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.equal(refreshed.claims()?.sub, aliceUid);
    const refreshToken = refreshed.refresh_token ?? tokens.refresh_token ?? "";
    await client.tokenRevocation(rp, refreshToken);
    assert.equal((await oauthError(client.refreshTokenGrant(rp, refreshToken))).error, "invalid_grant");
    // Revoking the refresh token revoked its grant: the access tokens of the grant are gone too.
    const info = await send(platform, "GET", "/oidc/me", { token: refreshed.access_token });
    assert.equal(info.status, 401);
    assert.match(String(info.headers["www-authenticate"]), /invalid_token/);
  });

  it("without a platform session the browser goes to /login?return=... and comes back after logging in", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = new TestBrowser([platform.caPem]);
    const started = await start(rp, GRAFANA.redirect);
    const first = await authorize(browser, started.url);
    assert.equal(first.status, 303);
    assert.ok(first.login, first.body);
    const back = first.login.searchParams.get("return") ?? "";
    assert.match(back, /^\/oidc\/interaction\/[\w-]+$/);
    // The console's login page sets the session cookie; the test does what it does.
    const reply = await api.login("alice", "alice-password-1");
    secrets.push(reply.json().accessKey);
    await browser.jar.setCookie(`vcp_session=${reply.json().accessKey}; Path=/; Secure; HttpOnly`, platform.url);
    const answer = await authorize(browser, new URL(back, platform.url));
    assert.ok(answer.location, answer.body);
    const tokens = await client.authorizationCodeGrant(rp, answer.location, {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
    });
    secrets.push(tokens.access_token, tokens.id_token ?? "", tokens.refresh_token ?? "");
    assert.equal(tokens.claims()?.preferred_username, "alice");
  });

  it("prompt=none without a platform session answers login_required at the redirect URI", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const started = await start(rp, GRAFANA.redirect, { prompt: "none" });
    const answer = await authorize(new TestBrowser([platform.caPem]), started.url);
    assert.equal(answer.location?.searchParams.get("error"), "login_required");
    assert.equal(answer.location?.searchParams.get("state"), started.state);
  });

  it("another person's platform session signs in that person, not the provider's earlier one", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("alice", "alice-password-1");
    assert.equal((await codeFlow(browser, rp, GRAFANA.redirect)).claims()?.preferred_username, "alice");
    const bob = await api.login("bob", "bob-password-1");
    secrets.push(bob.json().accessKey);
    await browser.jar.setCookie(`vcp_session=${bob.json().accessKey}; Path=/; Secure; HttpOnly`, platform.url);
    assert.equal((await codeFlow(browser, rp, GRAFANA.redirect)).claims()?.preferred_username, "bob");
  });

  it("a redirect URI that is not registered is refused on the provider's page (invalid_redirect_uri), never followed", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("alice", "alice-password-1");
    for (const uri of [`${GRAFANA.redirect}/x`, "https://evil.example.test/login/generic_oauth"]) {
      const answer = await authorize(browser, (await start(rp, uri)).url);
      assert.equal(answer.location, undefined);
      assert.equal(answer.status, 400);
      assert.match(answer.body, /invalid_redirect_uri/);
    }
  });

  it("a wrong client secret is refused with invalid_client (401)", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("alice", "alice-password-1");
    const started = await start(rp, GRAFANA.redirect);
    const answer = await authorize(browser, started.url);
    assert.ok(answer.location);
    const wrong = await relyingParty(GRAFANA.id, "not-the-secret");
    const refused = await oauthError(
      client.authorizationCodeGrant(wrong, answer.location, {
        pkceCodeVerifier: started.verifier,
        expectedState: started.state,
      }),
    );
    assert.equal(refused.error, "invalid_client");
    assert.equal(refused.status, 401);
  });

  it("a public client must use PKCE (invalid_request) and may then redirect to any loopback port", async () => {
    const rp = await relyingParty(CLI.id);
    const browser = await signedIn("alice", "alice-password-1");
    const plain = new URL(`${issuer()}/auth`);
    for (const [name, value] of Object.entries({
      client_id: CLI.id,
      response_type: "code",
      redirect_uri: "http://127.0.0.1:41234/callback",
      scope: "openid",
      state: "s1",
    })) {
      plain.searchParams.set(name, value);
    }
    const refused = await authorize(browser, plain);
    assert.equal(refused.location?.searchParams.get("error"), "invalid_request");
    assert.match(refused.location?.searchParams.get("error_description") ?? "", /PKCE/);
    for (const port of [41234, 52001]) {
      const tokens = await codeFlow(browser, rp, `http://127.0.0.1:${port}/callback`);
      assert.equal(tokens.claims()?.sub, aliceUid);
    }
    const notLoopback = await authorize(browser, (await start(rp, "http://app.example.test:41234/callback")).url);
    assert.match(notLoopback.body, /invalid_redirect_uri/);
  });

  it("wildcard redirect URIs: refused in the Config while wildcardRedirect is off, matched once it is on", async () => {
    const argo = `  - name: Argo\n    clientId: ${ARGO.id}\n    clientSecret: ${ARGO.secret}\n    redirectURIs: [${ARGO.pattern}]\n`;
    const refused = await send(platform, "PATCH", `${MGMT}/configs/platform-config`, {
      token: platform.adminKey,
      body: { spec: { raw: config(clients(argo)) } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(refused.status, 422);
    assert.match(refused.body, /wildcardRedirect/);
    // Off: only the exact URI of another registration works; a sibling host does not.
    const exact = `  - name: Argo\n    clientId: ${ARGO.id}\n    clientSecret: ${ARGO.secret}\n    redirectURIs: [https://one.argo.example.test/auth/callback]\n`;
    await setPlatformConfig(platform, config(clients(exact)));
    const rp = await relyingParty(ARGO.id, ARGO.secret);
    const browser = await signedIn("alice", "alice-password-1");
    await codeFlow(browser, rp, "https://one.argo.example.test/auth/callback");
    const sibling = await authorize(browser, (await start(rp, "https://two.argo.example.test/auth/callback")).url);
    assert.match(sibling.body, /invalid_redirect_uri/);

    await setPlatformConfig(platform, config(`  wildcardRedirect: true\n${clients(argo)}`));
    for (const host of ["one", "two"]) {
      await codeFlow(browser, rp, `https://${host}.argo.example.test/auth/callback`);
    }
    for (const uri of [
      "https://a.b.argo.example.test/auth/callback",
      "https://evil.test/x.argo.example.test/auth/callback",
      "https://one.argo.example.test/auth/other",
    ]) {
      const answer = await authorize(browser, (await start(rp, uri)).url);
      assert.match(answer.body, /invalid_redirect_uri/, uri);
    }
    await setPlatformConfig(platform, config(clients()));
  });

  it("clients follow the Config without a restart: a removed client is unknown (invalid_client), an added one works", async () => {
    const added = `  - name: Later\n    clientId: later\n    clientSecret: later-client-s3cret\n    redirectURIs: [https://later.example.test/cb]\n`;
    secrets.push("later-client-s3cret");
    const browser = await signedIn("alice", "alice-password-1");
    const before = await authorize(
      browser,
      `${issuer()}/auth?client_id=later&response_type=code&scope=openid&redirect_uri=https%3A%2F%2Flater.example.test%2Fcb`,
    );
    assert.match(before.body, /invalid_client/);
    await setPlatformConfig(platform, config(clients(added)));
    const rp = await relyingParty("later", "later-client-s3cret");
    await codeFlow(browser, rp, "https://later.example.test/cb");
    await setPlatformConfig(platform, config(clients()));
    assert.equal((await oauthError(client.refreshTokenGrant(rp, "anything"))).error, "invalid_client");
  });

  it("a disabled user gets no tokens: refresh is invalid_grant, userinfo invalid_token, sign-in goes to the login page", async () => {
    await api.createUser(platform.adminKey, "carol", { username: "carol" });
    await api.setPassword(platform.adminKey, "carol", "carol-password-1");
    secrets.push("carol-password-1");
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("carol", "carol-password-1");
    const tokens = await codeFlow(browser, rp, GRAFANA.redirect);
    const disable = await send(platform, "PATCH", `${MGMT}/users/carol`, {
      token: platform.adminKey,
      body: { spec: { disabled: true } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(disable.status, 200, disable.body);
    assert.equal((await oauthError(client.refreshTokenGrant(rp, tokens.refresh_token ?? ""))).error, "invalid_grant");
    const info = await send(platform, "GET", "/oidc/me", { token: tokens.access_token });
    assert.equal(info.status, 401);
    assert.match(String(info.headers["www-authenticate"]), /invalid_token/);
    const again = await authorize(browser, (await start(rp, GRAFANA.redirect)).url);
    assert.equal(again.location, undefined);
    assert.ok(again.login);
  });

  it("a deleted user's tokens stop working (invalid_grant, invalid_token)", async () => {
    await api.createUser(platform.adminKey, "dave", { username: "dave" });
    await api.setPassword(platform.adminKey, "dave", "dave-password-1");
    secrets.push("dave-password-1");
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const tokens = await codeFlow(await signedIn("dave", "dave-password-1"), rp, GRAFANA.redirect);
    assert.equal((await send(platform, "GET", "/oidc/me", { token: tokens.access_token })).status, 200);
    const deleted = await send(platform, "DELETE", `${MGMT}/users/dave`, { token: platform.adminKey });
    assert.equal(deleted.status, 200, deleted.body);
    assert.equal((await oauthError(client.refreshTokenGrant(rp, tokens.refresh_token ?? ""))).error, "invalid_grant");
    assert.equal((await send(platform, "GET", "/oidc/me", { token: tokens.access_token })).status, 401);
  });

  it("a revoked access token is refused by userinfo, and the tokens issued with it are revoked too", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const tokens = await codeFlow(await signedIn("alice", "alice-password-1"), rp, GRAFANA.redirect);
    await client.tokenRevocation(rp, tokens.access_token);
    const info = await send(platform, "GET", "/oidc/me", { token: tokens.access_token });
    assert.equal(info.status, 401);
    assert.match(String(info.headers["www-authenticate"]), /invalid_token/);
    // RFC 7009 section 2.1: revoking an access token may revoke the refresh token of the same grant; it does here.
    assert.equal((await oauthError(client.refreshTokenGrant(rp, tokens.refresh_token ?? ""))).error, "invalid_grant");
    // A new sign-in of the same browser gets new tokens.
    const again = await codeFlow(await signedIn("alice", "alice-password-1"), rp, GRAFANA.redirect);
    assert.equal((await send(platform, "GET", "/oidc/me", { token: again.access_token })).status, 200);
  });

  it("a password change (tokenGeneration bump) ends the user's refresh tokens", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("bob", "bob-password-1");
    const tokens = await codeFlow(browser, rp, GRAFANA.redirect);
    const changed = await api.setPassword(platform.adminKey, "bob", "bob-password-2");
    assert.equal(changed.status, 201, changed.body);
    secrets.push("bob-password-2");
    assert.equal((await oauthError(client.refreshTokenGrant(rp, tokens.refresh_token ?? ""))).error, "invalid_grant");
    // The new platform session gets new tokens.
    const fresh = await signedIn("bob", "bob-password-2");
    const renewed = await codeFlow(fresh, rp, GRAFANA.redirect);
    secrets.push((await client.refreshTokenGrant(rp, renewed.refresh_token ?? "")).access_token);
  });

  /** A token request with client_secret_basic (the grant is never reached when the client does not authenticate). */
  const tokenRequest = (clientId: string, secret: string) =>
    send(platform, "POST", "/oidc/token", {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}`,
      body: "grant_type=refresh_token&refresh_token=not-a-refresh-token",
      contentType: "application/x-www-form-urlencoded",
    });

  it("wrong client secrets are throttled per client: then 429 with Retry-After, even for the right secret", async () => {
    for (let i = 0; i < 10; i++) {
      const wrong = await tokenRequest(WIKI.id, `guess-${i}-of-the-wiki-secret`);
      assert.equal(wrong.status, 401, wrong.body);
      assert.equal(wrong.json().error, "invalid_client");
    }
    for (const secret of ["guess-10-of-the-wiki-secret", WIKI.secret]) {
      const throttled = await tokenRequest(WIKI.id, secret);
      assert.equal(throttled.status, 429, throttled.body);
      assert.ok(Number(throttled.headers["retry-after"]) >= 1, String(throttled.headers["retry-after"]));
      assert.equal(throttled.json().error, "temporarily_unavailable");
      assert.match(throttled.json().error_description, /too many failed authentications of this client/);
    }
    // Another client is not affected: it authenticates and gets to the grant (an unknown refresh token).
    const other = await tokenRequest(GRAFANA.id, GRAFANA.secret);
    assert.equal(other.status, 400, other.body);
    assert.equal(other.json().error, "invalid_grant");
    // The platform writes the line before it answers, but its stderr reaches this process when the pipe is read.
    await waitFor(
      async () => /OpenID client throttled after failed client authentications/.test(logs()),
      "the platform to log the throttled client",
    );
  });

  it("a refresh token is an access key of its user (spec.oidcProvider): listed, no API credential, revoked by deleting it", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("alice", "alice-password-1");
    const started = await start(rp, GRAFANA.redirect);
    const answer = await authorize(browser, started.url);
    assert.ok(answer.location, answer.body);
    const tokens = await client.authorizationCodeGrant(rp, answer.location, {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
    });
    rps.remember(tokens);
    const refreshToken = tokens.refresh_token ?? "";
    assert.ok(refreshToken);
    // The person sees it among their own keys (the platform session is theirs).
    const session = (await browser.jar.getCookies(platform.url)).find((c) => c.key === "vcp_session")?.value ?? "";
    const listed = await send(platform, "GET", `${MGMT}/ownedaccesskeys`, { token: session });
    assert.equal(listed.status, 200, listed.body);
    assert.equal(listed.body.includes(refreshToken), false, "the token itself is never shown");
    const nonceDigest = `sha256:${createHash("sha256").update(started.nonce).digest("hex")}`;
    const keys = listed
      .json()
      .items.filter((k: Claims) => k.spec.type === "OIDCRefreshToken" && k.spec.oidcProvider?.nonce === nonceDigest);
    assert.equal(keys.length, 1, listed.body);
    const [key] = keys;
    assert.equal(key.spec.user, "alice");
    assert.equal(key.spec.key, undefined);
    assert.equal(key.spec.displayName, "Grafana (OpenID refresh token)");
    assert.deepEqual(key.spec.oidcProvider, {
      clientId: GRAFANA.id,
      redirectUri: GRAFANA.redirect,
      scopes: "openid profile email groups",
      nonce: nonceDigest,
    });
    assert.ok(key.spec.ttl > 0);
    // An application's refresh token acts for no one on the platform's API.
    const asBearer = await send(platform, "GET", `${MGMT}/users/alice`, { token: refreshToken });
    assert.equal(asBearer.status, 401);
    assert.match(asBearer.json().message, /OpenID refresh token, not an access key/);
    // It refreshes while its key is enabled; disabled, then deleted, it does not.
    rps.remember(await client.refreshTokenGrant(rp, refreshToken));
    const disable = await send(platform, "PATCH", `${MGMT}/ownedaccesskeys/${key.metadata.name}`, {
      token: session,
      body: { spec: { disabled: true } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(disable.status, 200, disable.body);
    assert.equal((await oauthError(client.refreshTokenGrant(rp, refreshToken))).error, "invalid_grant");
    const deleted = await send(platform, "DELETE", `${MGMT}/ownedaccesskeys/${key.metadata.name}`, { token: session });
    assert.equal(deleted.status, 200, deleted.body);
    assert.equal((await oauthError(client.refreshTokenGrant(rp, refreshToken))).error, "invalid_grant");
  });

  it("a rotated refresh token (public client) gets a new key with the same redirect URI; revoking it deletes the key", async () => {
    const rp = await relyingParty(CLI.id);
    const tokens = await codeFlow(await signedIn("bob", "bob-password-2"), rp, "http://127.0.0.1:41999/callback");
    const keysOf = async (clientId: string) =>
      (await adminGet(platform, "ownedaccesskeys")).json.items.filter(
        (k: Claims) =>
          k.spec.type === "OIDCRefreshToken" && k.spec.user === "bob" && k.spec.oidcProvider?.clientId === clientId,
      );
    const [first] = await keysOf(CLI.id);
    assert.equal(first.spec.oidcProvider.redirectUri, "http://127.0.0.1:41999/callback");
    const rotated = await client.refreshTokenGrant(rp, tokens.refresh_token ?? "");
    rps.remember(rotated);
    assert.ok(rotated.refresh_token && rotated.refresh_token !== tokens.refresh_token);
    const now = await keysOf(CLI.id);
    assert.equal(now.length, 1, "the consumed token's key is gone");
    assert.notEqual(now[0].metadata.name, first.metadata.name);
    assert.deepEqual(now[0].spec.oidcProvider, first.spec.oidcProvider);
    // The rotated-away token used again is reuse: refused, and the whole grant with it.
    assert.equal((await oauthError(client.refreshTokenGrant(rp, tokens.refresh_token ?? ""))).error, "invalid_grant");
    assert.equal((await oauthError(client.refreshTokenGrant(rp, rotated.refresh_token))).error, "invalid_grant");
    assert.deepEqual(await keysOf(CLI.id), []);
    // A revoked refresh token takes its key with it.
    const again = await codeFlow(await signedIn("bob", "bob-password-2"), rp, "http://127.0.0.1:41999/callback");
    assert.equal((await keysOf(CLI.id)).length, 1);
    await client.tokenRevocation(rp, again.refresh_token ?? "");
    assert.deepEqual(await keysOf(CLI.id), []);
  });

  it("RP-initiated logout: a confirmation page, then the post-logout redirect; the platform session ends too", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("alice", "alice-password-1");
    const tokens = await codeFlow(browser, rp, GRAFANA.redirect);
    const key = (await browser.jar.getCookies(platform.url)).find((c) => c.key === "vcp_session")?.value ?? "";
    assert.equal((await send(platform, "GET", `${MGMT}/users/alice`, { token: key })).status, 200);
    const end = client.buildEndSessionUrl(rp, {
      id_token_hint: tokens.id_token ?? "",
      post_logout_redirect_uri: GRAFANA.redirect,
      state: "bye",
    });
    const page = await browser.navigate(end.toString());
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /Grafana asks to sign you out/);
    const form = /<form[^>]*action="([^"]+)"[\s\S]*?name="xsrf" value="([^"]+)"/.exec(page.body);
    assert.ok(form);
    const done = await browser.fetch(form[1], { form: { xsrf: form[2], logout: "yes" } });
    assert.equal(done.status, 303);
    const back = new URL(String(done.headers.location));
    assert.equal(`${back.origin}${back.pathname}`, GRAFANA.redirect);
    assert.equal(back.searchParams.get("state"), "bye");
    assert.equal((await send(platform, "GET", `${MGMT}/users/alice`, { token: key })).status, 401);
    const again = await authorize(browser, (await start(rp, GRAFANA.redirect)).url);
    assert.ok(again.login, again.body);
  });

  it("an ID token is no credential of the platform's API", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const tokens = await codeFlow(await signedIn("alice", "alice-password-1"), rp, GRAFANA.redirect);
    assert.equal((await send(platform, "GET", `${MGMT}/users/alice`, { token: tokens.id_token })).status, 401);
    assert.equal((await send(platform, "GET", `${MGMT}/users/alice`, { token: tokens.access_token })).status, 401);
  });

  it("a signing key rotation signs new ID tokens with the new key and keeps the old one published", async () => {
    const rp = await relyingParty(GRAFANA.id, GRAFANA.secret);
    const browser = await signedIn("alice", "alice-password-1");
    const before = await codeFlow(browser, rp, GRAFANA.redirect);
    const oldKid = decodeProtectedHeader(before.id_token ?? "").kid;
    const rotation = await send(platform, "POST", `${MGMT}/signingkeyrotations`, {
      token: platform.adminKey,
      body: { apiVersion: "management.platform.sh/v1", kind: "SigningKeyRotation", metadata: {}, spec: {} },
    });
    assert.equal(rotation.status, 201, rotation.body);
    const after = await codeFlow(browser, rp, GRAFANA.redirect);
    const newKid = decodeProtectedHeader(after.id_token ?? "").kid;
    assert.notEqual(newKid, oldKid);
    const keys = createLocalJWKSet(await jwks());
    for (const token of [before.id_token, after.id_token]) {
      await jwtVerify(token ?? "", keys, { issuer: issuer(), audience: GRAFANA.id });
    }
  });

  it("client secrets are redacted when the Config is read", async () => {
    const reply = await send(platform, "GET", `${MGMT}/configs/platform-config`, { token: platform.adminKey });
    assert.equal(reply.status, 200);
    assert.ok(!reply.body.includes(GRAFANA.secret));
    assert.match(reply.json().spec.raw, /clientId: grafana/);
  });

  it("enabled: false turns the whole provider off (404)", async () => {
    await setPlatformConfig(platform, config(`  enabled: false\n${clients()}`));
    for (const path of ["/oidc/.well-known/openid-configuration", "/oidc/jwks", "/oidc/auth", "/oidc/interaction/x"]) {
      assert.equal((await send(platform, "GET", path)).status, 404, path);
    }
    assert.equal((await send(platform, "POST", "/oidc/token")).status, 404);
    await setPlatformConfig(platform, config(clients()));
    assert.equal((await send(platform, "GET", "/oidc/.well-known/openid-configuration")).status, 200);
  });

  it("no client secret, password, key, code or token reaches the log or the audit log", async () => {
    const audit = await readFile(`${platform.dataDir}/audit/audit.log`, "utf8");
    assert.match(audit, /\/oidc\/token/);
    for (const text of [logs(), audit]) {
      for (const secret of [...secrets, ...rps.secrets].filter((s) => s.length > 8)) {
        const at = text.indexOf(secret);
        assert.equal(at, -1, `a secret was logged after: ${text.slice(Math.max(0, at - 200), at)}`);
      }
    }
  });
});
