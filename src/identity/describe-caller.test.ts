import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { isStatusError } from "../apimachinery/errors.ts";
import type { DescribeCaller } from "../apis/management/v1/self.ts";
import { describeCaller } from "./describe-caller.ts";
import { instancesRunBy } from "./runtime-binding.ts";
import { platform } from "./testing.ts";
import { TOKEN_KEY_TYPE } from "./token-claims.ts";
import { openTokenFixture, type TokenFixture } from "./token-testing.ts";

describe("describeCaller() (selves)", () => {
  let f: TokenFixture;
  let describeAs: DescribeCaller;
  let bob: string;
  let vc: string;
  let admin: string;

  before(async () => {
    f = await openTokenFixture();
    describeAs = describeCaller({
      authenticate: (credential) =>
        f.tokens.recognizes(credential)
          ? f.tokens.authenticateToken(credential)
          : f.authenticator.authenticateToken(credential, { touch: false }),
      settings: () => ({ platformHost: "platform.test", projectNamespacePrefix: "p-" }),
      limits: () => f.settings.current().auth,
      instancesRunBy: (owner) => instancesRunBy(f.index, owner),
    });
    await f.createUser("bob", { email: "bob@example.com", groups: ["devs"] });
    await f.createUser("root", { clusterRoles: [{ name: "admin" }] });
    bob = await f.createKey("bob-key", { user: "bob" });
    admin = await f.createKey("root-key", { user: "root" });
    vc = await f.createKey("vc-key", { user: "root", scope: { roles: [{ role: "virtualcluster", projects: ["*"] }] } });
  });
  after(async () => {
    await f.close();
  });

  it("describeCaller() lets a key with the role virtualcluster review an access key: user, groups, scope", async () => {
    const scoped = await f.createKey("bob-scoped", { user: "bob", scope: { projects: [{ project: "a" }] } });
    const status = await describeAs(await f.contextOf(vc), scoped);
    assert.equal(status.user?.name, "bob");
    assert.equal(status.user?.email, "bob@example.com");
    assert.deepEqual(status.groups, ["devs", "system:authenticated"]);
    assert.equal(status.accessKey, "bob-scoped");
    assert.deepEqual(status.accessKeyScope, { projects: [{ project: "a" }] });
  });

  it("describeCaller() reviews a direct cluster endpoint token the same way, without a key name", async () => {
    const { token } = await f.issuer.issue({
      context: await f.contextOf(bob),
      ttlSeconds: 60,
      scope: { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] },
    });
    for (const caller of [vc, admin]) {
      const status = await describeAs(await f.contextOf(caller), token);
      assert.equal(status.user?.name, "bob");
      assert.deepEqual(status.groups, ["devs", "system:authenticated"]);
      assert.equal(status.accessKey, undefined);
      assert.equal(status.accessKeyType, TOKEN_KEY_TYPE);
      assert.deepEqual(status.accessKeyScope, { virtualClusters: [{ project: "a", virtualCluster: "vc1" }] });
      assert.equal(JSON.stringify(status).includes(token), false);
      // A token ends at its exp: what a virtual cluster may cache it for.
      const { exp } = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());
      assert.equal(status.accessKeyExpirationTimestamp, new Date(exp * 1000).toISOString());
    }
  });

  it("describeCaller() gives a key's expiration: its ttl, or the platform's maximum age when that ends first", async () => {
    const reviewAt = async (key: string) => (await describeAs(await f.contextOf(vc), key)).accessKeyExpirationTimestamp;
    const forever = await f.createKey("bob-forever", { user: "bob" });
    assert.equal(await reviewAt(forever), undefined);
    // A ttl past the year 9999 has no timestamp (it answered 500 before).
    const eons = await f.createKey("bob-eons", { user: "bob", ttl: Number.MAX_SAFE_INTEGER });
    assert.equal(await reviewAt(eons), undefined);
    const hour = await f.createKey("bob-hour", { user: "bob", ttl: 3600 });
    const created = Date.parse((await f.keys.get(platform(), { name: "bob-hour" })).metadata.creationTimestamp ?? "");
    assert.equal(await reviewAt(hour), new Date(created + 3_600_000).toISOString());
    f.settings.update({ ...f.settings.current(), auth: { ...f.settings.current().auth, accessKeyMaxTTLSeconds: 60 } });
    try {
      assert.equal(await reviewAt(hour), new Date(created + 60_000).toISOString());
    } finally {
      f.settings.update({ ...f.settings.current(), auth: { ...f.settings.current().auth, accessKeyMaxTTLSeconds: 0 } });
    }
  });

  it("describeCaller() refuses to review another credential for callers without the role virtualcluster (403)", async () => {
    const other = await f.createKey("bob-other", { user: "bob" });
    await assert.rejects(describeAs(await f.contextOf(bob), other), (error: unknown) => {
      assert.ok(isStatusError(error));
      assert.equal(error.code, 403);
      assert.match(error.message, /only platform admins, the runtime keys of virtual clusters and the agent keys/);
      return true;
    });
    // Describing oneself needs no role.
    assert.equal((await describeAs(await f.contextOf(bob))).user?.name, "bob");
  });

  it("describeCaller() refuses a role its caller wrote into their own key without doing what the role is for", async () => {
    const other = await f.createKey("root-other", { user: "root" });
    // A user writes any role into the scope of a key of their own: an agent of a cluster that does not exist, the
    // runtime of a project they are not in. Neither reports for an instance nor connects an agent.
    const selfMade = [
      { role: "agent", clusters: ["no-such-cluster"] },
      { role: "agent", clusters: ["*"] },
      { role: "virtualcluster", projects: ["*"] },
      { role: "virtualcluster", projects: ["someone-elses"], virtualClusters: ["vc1"] },
    ];
    for (const [i, role] of selfMade.entries()) {
      const probe = await f.createKey(`bob-probe-${i}`, { user: "bob", scope: { roles: [role] } });
      await assert.rejects(describeAs(await f.contextOf(probe), other), (error: unknown) => {
        assert.ok(isStatusError(error));
        assert.equal(error.code, 403, JSON.stringify(role));
        return true;
      });
    }
  });

  it("describeCaller() answers 400 for a credential that does not authenticate, saying why", async () => {
    const { token } = await f.issuer.issue({ context: await f.contextOf(bob), ttlSeconds: 60 });
    f.clock.now += 61_000;
    try {
      await assert.rejects(describeAs(await f.contextOf(vc), token), (error: unknown) => {
        assert.ok(isStatusError(error));
        assert.equal(error.code, 400);
        assert.match(error.message, /^spec\.accessKey: token expired/);
        return true;
      });
      await assert.rejects(describeAs(await f.contextOf(vc), "no-such-key-0123456789"), /Access key not found/);
    } finally {
      f.clock.now -= 61_000;
    }
  });
});
