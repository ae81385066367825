import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { isStatusError } from "../apimachinery/errors.ts";
import type { AuthorizationAttributes, UserInfo } from "../registry/types.ts";
import { principalOf } from "./principal.ts";
import { platform } from "./testing.ts";
import { TOKEN_AUDIENCE, TOKEN_KEY_TYPE } from "./token-claims.ts";
import { openTokenFixture, TEST_ISSUER, type TokenFixture, verifyWithJwks } from "./token-testing.ts";

const G = "management.platform.sh";
const request = (user: UserInfo, verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}) => ({
  user,
  verb,
  group: G,
  version: "v1",
  resource,
  resourceRequest: true,
  ...extra,
});

/** The 401 message of a rejected token (and that it never quotes the token). */
async function rejection(promise: Promise<unknown>, token: string): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isStatusError(error), String(error));
    assert.equal(error.code, 401);
    assert.equal(error.message.includes(token), false);
    assert.equal(error.message.includes(token.split(".")[2]), false);
    return error.message;
  }
  throw new Error("the token was accepted");
}

describe("direct cluster endpoint tokens", () => {
  let f: TokenFixture;
  let bobKey: string;
  const issue = async (key: string, ttlSeconds = 600, scope?: Record<string, unknown>) =>
    (await f.issuer.issue({ context: await f.contextOf(key), ttlSeconds, scope })).token;

  before(async () => {
    f = await openTokenFixture();
    await f.createUser("bob", { groups: ["devs"] });
    await f.createTeam("ops", { users: ["bob"], clusterRoles: [{ name: "viewer" }] });
    bobKey = await f.createKey("bob-key", { user: "bob" });
  });
  beforeEach(() => {
    f.clock.now = Date.now();
  });
  after(async () => {
    await f.close();
  });

  it("TokenIssuer.issue() signs a JWT that an independent check verifies against the published JWKS", async () => {
    const token = await issue(bobKey, 600, { projects: [{ project: "a" }] });
    const { header, payload } = verifyWithJwks(token, f.ring.jwks() as never);
    assert.deepEqual(header, { alg: "ES256", kid: f.ring.current().kid, typ: "JWT" });
    const bob = f.index.user("bob")!;
    assert.equal(payload.iss, TEST_ISSUER);
    assert.equal(payload.sub, "bob");
    assert.equal(payload.aud, TOKEN_AUDIENCE);
    assert.equal((payload.exp as number) - (payload.iat as number), 600);
    assert.equal(typeof payload.jti, "string");
    assert.deepEqual(
      { uid: payload.uid, name: payload.name, kind: payload.kind, gen: payload.gen, scope: payload.scope },
      { uid: bob.uid, name: "bob", kind: "User", gen: 0, scope: { projects: [{ project: "a" }] } },
    );
    assert.throws(() => verifyWithJwks(`${token.slice(0, -4)}AAAA`, f.ring.jwks() as never), /does not verify/);
  });

  it("TokenAuthenticator authenticates a token as its user, with the user's teams and the token's scope", async () => {
    const token = await issue(bobKey, 600, { projects: [{ project: "a" }] });
    assert.equal(f.tokens.recognizes(token), true);
    assert.equal(f.tokens.recognizes(bobKey), false);
    const user = await f.tokens.authenticateToken(token);
    assert.equal(user.name, "bob");
    assert.deepEqual(user.groups, ["devs", "ops", "system:authenticated"]);
    const principal = principalOf(user)!;
    assert.equal(principal.key.type, TOKEN_KEY_TYPE);
    assert.ok(principal.roles.has("viewer"));
    // Scope enforced as for a scoped key: the viewer may list users, the token may not.
    assert.equal((await f.authorizer.authorize(request(user, "list", "users"))).allowed, false);
    assert.equal(
      (await f.authorizer.authorize(request(user, "get", "virtualclusterinstances", { namespace: "p-a", name: "x" })))
        .allowed,
      true,
    );
  });

  it("a token never mints credentials, even without a scope", async () => {
    const user = await f.tokens.authenticateToken(await issue(bobKey));
    assert.equal((await f.authorizer.authorize(request(user, "list", "users"))).allowed, true);
    for (const [verb, resource, subresource, name] of [
      ["create", "ownedaccesskeys"],
      ["update", "ownedaccesskeys", undefined, "bob-key"],
      ["create", "directclusterendpointtokens"],
      ["create", "users", "password", "bob"],
      ["create", "virtualclusterinstances", "kubeconfig", "vc"],
    ] as const) {
      const decision = await f.authorizer.authorize(request(user, verb, resource, { subresource, name }));
      assert.equal(decision.allowed, false, `${verb} ${resource}/${subresource ?? ""} is allowed`);
    }
    await assert.rejects(
      f.issuer.issue({ context: { ...(await f.contextOf(bobKey)), user }, ttlSeconds: 60 }),
      /cannot be used to get another one/,
    );
  });

  it("TokenAuthenticator rejects a token once it has expired", async () => {
    const token = await issue(bobKey, 60);
    await f.tokens.authenticateToken(token);
    f.clock.now += 60_000;
    assert.match(await rejection(f.tokens.authenticateToken(token), token), /token expired/);
  });

  it("TokenAuthenticator rejects a token older than the platform's maximum access key lifetime", async () => {
    const token = await issue(bobKey, 600);
    f.settings.update({ ...f.settings.current(), auth: { ...f.settings.current().auth, accessKeyMaxTTLSeconds: 120 } });
    try {
      await f.tokens.authenticateToken(token);
      f.clock.now += 120_000;
      assert.match(await rejection(f.tokens.authenticateToken(token), token), /maximum access key lifetime/);
    } finally {
      f.settings.update({ ...f.settings.current(), auth: { ...f.settings.current().auth, accessKeyMaxTTLSeconds: 0 } });
    }
  });

  it("TokenAuthenticator rejects tokens issued before the user's tokenGeneration was raised", async () => {
    await f.createUser("gen");
    const key = await f.createKey("gen-key", { user: "gen" });
    const token = await issue(key);
    await f.tokens.authenticateToken(token);
    await f.users.patch(platform(), { name: "gen" }, "merge", { spec: { tokenGeneration: 1 } }, {});
    await f.informer.fresh();
    assert.match(await rejection(f.tokens.authenticateToken(token), token), /revoked/);
    // The key that asked for it was issued before too: a new one gets a new token.
    const next = await issue(await f.createKey("gen-key-2", { user: "gen" }));
    assert.equal((await f.tokens.authenticateToken(next)).name, "gen");
  });

  it("TokenAuthenticator rejects tokens of a disabled user, and of a user deleted and created again", async () => {
    await f.createUser("dis");
    const key = await f.createKey("dis-key", { user: "dis" });
    const token = await issue(key);
    await f.users.patch(platform(), { name: "dis" }, "merge", { spec: { disabled: true } }, {});
    assert.match(await rejection(f.tokens.authenticateToken(token), token), /user is disabled/);
    await f.users.delete(platform(), { name: "dis" }, {});
    await f.createUser("dis");
    assert.match(await rejection(f.tokens.authenticateToken(token), token), /no longer exists/);
  });

  it("TokenAuthenticator accepts tokens of the previous key after a rotation, and rejects forged ones", async () => {
    const token = await issue(bobKey, 60);
    await f.ring.rotate("RS256");
    const fresh = await issue(bobKey, 60);
    assert.equal(verifyWithJwks(fresh, f.ring.jwks() as never).header.alg, "RS256");
    assert.equal((await f.tokens.authenticateToken(token)).name, "bob");
    const [h, p] = token.split(".");
    const claims = JSON.parse(Buffer.from(p, "base64url").toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, name: "admin" })).toString("base64url")}.${token.split(".")[2]}`;
    assert.match(await rejection(f.tokens.authenticateToken(forged), forged), /signature verification failed/);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none", kid: "x" })).toString("base64url")}.${p}.x`;
    assert.equal(f.tokens.recognizes(unsigned), false);
  });

  it("TokenIssuer.issue() refuses a scope wider than the caller's key, and defaults to the caller's scope", async () => {
    const scoped = await f.createKey("bob-scoped", { user: "bob", scope: { projects: [{ project: "a" }] } });
    const context = await f.contextOf(scoped);
    await assert.rejects(
      f.issuer.issue({ context, ttlSeconds: 60, scope: { projects: [{ project: "*" }] } }),
      (error: unknown) =>
        isStatusError(error) && error.code === 403 && /spec\.scope\.projects\[0\]/.test(error.message),
    );
    const narrower = await f.issuer.issue({
      context,
      ttlSeconds: 60,
      scope: { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] },
    });
    assert.deepEqual(narrower.claims.scope, { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] });
    const inherited = await f.issuer.issue({ context, ttlSeconds: 60 });
    assert.deepEqual(inherited.claims.scope, { projects: [{ project: "a" }] });
  });

  it("TokenIssuer.issue() refuses a scope too large for a bearer token (422)", async () => {
    const virtualClusters = Array.from({ length: 400 }, (_, i) => ({
      project: "p",
      virtualCluster: `vc-long-name-${i}`,
    }));
    await assert.rejects(
      f.issuer.issue({ context: await f.contextOf(bobKey), ttlSeconds: 60, scope: { virtualClusters } }),
      (error: unknown) =>
        isStatusError(error) && error.code === 422 && /spec\.scope: Forbidden: too large/.test(error.message),
    );
  });

  it("TokenIssuer.issue() signs team tokens for team keys and refuses subject keys", async () => {
    const teamKey = await f.createKey("ops-key", { team: "ops" });
    const { token, claims } = await f.issuer.issue({ context: await f.contextOf(teamKey), ttlSeconds: 60 });
    assert.equal(claims.kind, "Team");
    assert.equal(claims.sub, "team:ops");
    const user = await f.tokens.authenticateToken(token);
    assert.equal(user.name, "team:ops");
    const subjectKey = await f.createKey("robot-key", { subject: "robot" });
    await assert.rejects(
      f.issuer.issue({ context: await f.contextOf(subjectKey), ttlSeconds: 60 }),
      /issued to users and teams only/,
    );
  });
});
