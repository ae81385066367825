// Direct cluster endpoint tokens against the real platform (a child process) over HTTPS: the public JWKS and OpenID
// discovery, issuing tokens and checking them with an independent JWT verification, using them as bearer tokens (also
// with kubectl), expiry, tokenGeneration and disabled-user rejection, scope escalation, signing key rotation, the
// selves token review, the audit log never holding a token, and the offline verifier outliving the platform.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { verifyWithJwks } from "../src/identity/token-testing.ts";
import { createTokenVerifier } from "../src/identity/token-verifier.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { eventually, Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const GV = "management.platform.sh/v1";
const MERGE = "application/merge-patch+json";
const tokenBody = (spec: Record<string, unknown> = {}) => ({
  apiVersion: GV,
  kind: "DirectClusterEndpointToken",
  spec,
});

describe("direct cluster endpoint tokens over HTTPS", () => {
  let platform: PlatformProcess;
  let client: AuthClient;
  let workDir: string;
  let admin: string;
  let bob: string;
  const issued: string[] = [];

  const send = (...args: Parameters<AuthClient["send"]>) => client.send(...args);
  const issue = async (key: string, spec: Record<string, unknown> = {}) => {
    const reply = await send("POST", `${API}/directclusterendpointtokens`, { token: key, body: tokenBody(spec) });
    assert.equal(reply.status, 201, reply.body);
    const token: string = reply.json().status.token;
    issued.push(token);
    return token;
  };
  const jwks = async () => (await send("GET", "/.well-known/jwks.json")).json();
  /** Token review as a virtual cluster asks for it: selves with the token in the body, by a virtualcluster key. */
  let reviewer: string;
  const review = (token: string) =>
    send("POST", `${API}/selves`, { token: reviewer, body: { spec: { accessKey: token } } });

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), "vcp-tokens-"));
    const configFile = join(workDir, "platform.yaml");
    // Log everything in full: the token must still never reach the audit log.
    await writeFile(
      configFile,
      `audit:\n  enabled: true\n  path: ${join(workDir, "audit.log")}\n  policy:\n    rules:\n    - level: RequestResponse\n`,
    );
    platform = await startPlatformProcess({ extraArgs: ["--config", configFile, "--audit-dir", workDir] });
    client = new AuthClient(platform.url, platform.caPem);
    admin = platform.adminKey;
    await client.createUser(admin, "bob", { groups: ["devs"] });
    bob = await client.createKey(admin, "bob-main", { user: "bob" });
    reviewer = await client.createKey(admin, "token-reviewer", {
      user: "admin",
      scope: { roles: [{ role: "virtualcluster", projects: [{ project: "*" }] }] },
    });
  });
  after(async () => {
    client?.close();
    await platform?.stop();
    await rm(workDir, { recursive: true, force: true });
  });

  it("serves the JWKS and the OpenID discovery document without authentication, also under the API prefix", async () => {
    const discovery = await send("GET", "/.well-known/openid-configuration");
    assert.equal(discovery.status, 200);
    const document = discovery.json();
    assert.equal(document.issuer, platform.url);
    assert.equal(document.jwks_uri, `${platform.url}/.well-known/jwks.json`);
    assert.deepEqual(document.id_token_signing_alg_values_supported, ["ES256", "RS256"]);
    const keys = await jwks();
    assert.equal(keys.keys.length, 1);
    assert.equal(keys.keys[0].alg, "ES256");
    assert.equal("d" in keys.keys[0], false);
    const prefixed = await send("GET", "/kubernetes/management/.well-known/jwks.json");
    assert.deepEqual(prefixed.json(), keys);
  });

  it("issues a token an independent JWT check verifies against the published keys", async () => {
    const token = await issue(bob, { ttl: 300 });
    const { header, payload } = verifyWithJwks(token, await jwks());
    assert.equal(header.alg, "ES256");
    assert.equal(payload.iss, platform.url);
    assert.equal(payload.sub, "bob");
    assert.equal(payload.kind, "User");
    assert.equal(payload.name, "bob");
    assert.equal(payload.gen, 0);
    assert.equal((payload.exp as number) - (payload.iat as number), 300);
  });

  it("the management API refuses a token as a bearer token, saying what it is for; token review accepts it", async () => {
    const token = await issue(admin);
    for (const [method, path, body] of [
      ["GET", `${API}/users/bob`, undefined],
      ["POST", `${API}/users`, { apiVersion: GV, kind: "User", metadata: { name: "from-a-token" }, spec: {} }],
      ["POST", `${API}/selves`, {}],
    ] as const) {
      const reply = await send(method, path, { token, body });
      assert.equal(reply.status, 401, `${method} ${path}`);
      assert.match(reply.json().message, /for virtual cluster endpoints, not the management API/);
      assert.equal(reply.body.includes(token.split(".")[1]), false);
    }
    assert.equal((await send("GET", `${API}/users/from-a-token`, { token: admin })).status, 404);
    const reviewed = await review(await issue(bob));
    assert.equal(reviewed.status, 201, reviewed.body);
    assert.equal(reviewed.json().status.user.name, "bob");
    assert.equal(reviewed.json().status.accessKeyType, "DirectClusterEndpointToken");
    const tampered = `${token.slice(0, -6)}AAAAAA`;
    // A credential under review that does not pass is a bad request body, with the reason.
    const refused = await review(tampered);
    assert.equal(refused.status, 400);
    assert.match(refused.json().message, /spec\.accessKey: .*invalid token/);
    assert.equal(refused.body.includes(tampered.split(".")[1]), false);
  });

  it("kubectl with a token is refused (it prints its own 401 wording)", { skip: kubectlSkip }, async () => {
    const token = await issue(admin);
    const kubectl = new Kubectl(platform.kubeconfig);
    const listed = await kubectl.ok(["get", "users.management.platform.sh", "-o", "name"]);
    assert.match(listed, /user\.management\.platform\.sh\/bob/);
    const denied = await kubectl.run(["--token", token, "get", "users.management.platform.sh", "-o", "name"]);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /You must be logged in to the server/);
    assert.doesNotMatch(denied.stdout, /bob/);
  });

  it("a token stops passing review when it expires", async () => {
    const token = await issue(bob, { ttl: 1 });
    await eventually(async () => (await review(token)).status === 400, "expiry");
    assert.match((await review(token)).json().message, /token expired/);
  });

  it("raising the user's tokenGeneration, or disabling the user, rejects its tokens", async () => {
    await client.createUser(admin, "carol");
    const carol = await client.createKey(admin, "carol-main", { user: "carol" });
    const before = await issue(carol);
    const patch = (spec: Record<string, unknown>) =>
      send("PATCH", `${API}/users/carol`, { token: admin, body: { spec }, contentType: MERGE });
    assert.equal((await patch({ tokenGeneration: 1 })).status, 200);
    const revoked = await review(before);
    assert.equal(revoked.status, 400);
    assert.match(revoked.json().message, /revoked/);
    // The key that asked for it was issued before the change too: revoked, so a new key asks.
    assert.equal(
      (await send("POST", `${API}/directclusterendpointtokens`, { token: carol, body: tokenBody() })).status,
      401,
    );
    const after = await issue(await client.createKey(admin, "carol-second", { user: "carol" }));
    assert.equal((await review(after)).status, 201);
    assert.equal((await patch({ disabled: true })).status, 200);
    const disabled = await review(after);
    assert.equal(disabled.status, 400);
    assert.match(disabled.json().message, /user is disabled/);
  });

  it("a scoped key cannot widen its scope through a token, and the token carries the key's scope", async () => {
    // platformCLI lets the key ask for tokens; its scope also reaches project a.
    const scope = { roles: [{ role: "platformCLI" }], projects: [{ project: "a" }] };
    const scoped = await client.createKey(bob, "bob-cli-a", { scope });
    const wider = await send("POST", `${API}/directclusterendpointtokens`, {
      token: scoped,
      body: tokenBody({ scope: { projects: [{ project: "*" }] } }),
    });
    assert.equal(wider.status, 403);
    assert.match(wider.json().message, /spec\.scope\.projects\[0\]/);
    const token = await issue(scoped);
    assert.deepEqual(verifyWithJwks(token, await jwks()).payload.scope, scope);
    const reviewed = await review(token);
    assert.equal(reviewed.status, 201, reviewed.body);
    assert.deepEqual(reviewed.json().status.accessKeyScope, scope);
  });

  it("selves reviews a token for keys with the role virtualcluster, and refuses other callers", async () => {
    const vc = await client.createKey(admin, "vc-key", {
      user: "admin",
      scope: { roles: [{ role: "virtualcluster", projects: [{ project: "*" }] }] },
    });
    const token = await issue(bob, { scope: { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] } });
    const review = await send("POST", `${API}/selves`, { token: vc, body: { spec: { accessKey: token } } });
    assert.equal(review.status, 201, review.body);
    const status = review.json().status;
    assert.equal(status.user.name, "bob");
    assert.deepEqual(status.groups, ["devs", "system:authenticated"]);
    assert.deepEqual(status.accessKeyScope, { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] });
    assert.equal(review.body.includes(token), false);
    const refused = await send("POST", `${API}/selves`, { token: bob, body: { spec: { accessKey: token } } });
    assert.equal(refused.status, 403);
  });

  it("rotation (admins only) keeps the old key published; new tokens carry the new kid, old ones still work", async () => {
    const old = await issue(bob);
    const oldKid = verifyWithJwks(old, await jwks()).header.kid;
    const body = { apiVersion: GV, kind: "SigningKeyRotation", spec: { algorithm: "RS256" } };
    assert.equal((await send("POST", `${API}/signingkeyrotations`, { token: bob, body })).status, 403);
    const rotated = await send("POST", `${API}/signingkeyrotations`, { token: admin, body });
    assert.equal(rotated.status, 201, rotated.body);
    const { keyID, algorithm, publishedKeyIDs } = rotated.json().status;
    assert.equal(algorithm, "RS256");
    assert.deepEqual(publishedKeyIDs, [keyID, oldKid]);
    const published = await jwks();
    assert.deepEqual(
      published.keys.map((k: { kid: string }) => k.kid),
      [keyID, oldKid],
    );
    const next = await issue(bob);
    const checked = verifyWithJwks(next, published);
    assert.deepEqual([checked.header.kid, checked.header.alg], [keyID, "RS256"]);
    assert.equal(verifyWithJwks(old, published).header.kid, oldKid);
    assert.equal((await review(old)).status, 201);
    assert.equal((await review(next)).status, 201);
  });

  it("no token reaches the audit log, though the policy logs requests and responses in full", async () => {
    const path = join(workDir, "audit.log");
    await eventually(
      async () => (await readFile(path, "utf8").catch(() => "")).includes("signingkeyrotations"),
      "audit",
    );
    const log = await readFile(path, "utf8");
    assert.ok(log.includes("directclusterendpointtokens"));
    for (const token of issued) {
      for (const part of token.split(".").slice(1))
        assert.equal(log.includes(part), false, "a token is in the audit log");
    }
  });

  // Last: it stops the platform.
  it("the offline verifier checks tokens against the running platform's JWKS, and keeps working once it is gone", async () => {
    const verifier = createTokenVerifier({ jwksUrl: `${platform.url}/.well-known/jwks.json`, ca: platform.caPem });
    const scope = { virtualClusters: [{ project: "default", virtualCluster: "vc1" }] };
    const token = await issue(bob, { scope });
    const before = await verifier.verify(token);
    assert.deepEqual([before.name, before.kind, before.scope], ["bob", "User", scope]);
    const second = await issue(admin);
    await platform.stop();
    const offline = await verifier.verify(second);
    assert.equal(offline.name, "admin");
    await assert.rejects(verifier.verify(`${second.slice(0, -6)}AAAAAA`), /not valid/);
  });
});
