import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AuthIndex } from "../auth-index.ts";
import { OidcAccounts } from "./oidc-accounts.ts";

const record = (key: string, object: object, revision = 1) => ({
  key,
  value: JSON.stringify(object),
  revision,
  createRevision: revision,
});
const user = (name: string, uid: string, spec: Record<string, unknown>, annotations?: Record<string, string>) =>
  record(`/management.platform.sh/users//${name}`, { metadata: { name, uid, annotations }, spec });
const team = (name: string, spec: Record<string, unknown>) =>
  record(`/management.platform.sh/teams//${name}`, { metadata: { name, uid: `t-${name}` }, spec });

function fixture() {
  const index = new AuthIndex();
  index.reset([
    user("alice", "uid-a", {
      username: "alice",
      displayName: "Alice Example",
      email: "alice@example.com",
      groups: ["corp"],
      ssoGroups: ["ops", "dev"],
      tokenGeneration: 2,
    }),
    user("bob", "uid-b", { disabled: true }),
    team("dev", { users: ["alice"] }),
    team("corp-team", { groups: ["corp"] }),
    team("other", { users: ["bob"] }),
  ]);
  return { index, accounts: new OidcAccounts({ index, fresh: async () => {} }) };
}

describe("OidcAccounts", () => {
  it("claims() names the user by uid and carries username, display name, email, teams and SSO groups", () => {
    const { accounts } = fixture();
    const alice = accounts.userByUid("uid-a");
    assert.ok(alice);
    assert.deepEqual(accounts.claims(alice), {
      sub: "uid-a",
      preferred_username: "alice",
      name: "Alice Example",
      email: "alice@example.com",
      groups: ["corp-team", "dev", "ops"],
    });
    const bob = accounts.userByUid("uid-b");
    assert.ok(bob);
    assert.deepEqual(accounts.claims(bob), { sub: "uid-b", preferred_username: "bob", name: "bob", groups: ["other"] });
  });

  it("active() knows no disabled or unknown user", async () => {
    const { accounts } = fixture();
    assert.equal((await accounts.active("uid-a"))?.name, "alice");
    assert.equal(await accounts.active("uid-b"), undefined);
    assert.equal(await accounts.active("uid-x"), undefined);
  });

  it("valid() drops a grant written under another tokenGeneration and every artifact of a user who may not sign in", async () => {
    const { index, accounts } = fixture();
    const stamp = accounts.stamp("Grant", { accountId: "uid-a" });
    assert.deepEqual(stamp, { generation: 2, sessions: 0 });
    assert.ok(await accounts.valid("Grant", { accountId: "uid-a" }, { generation: 2 }), "a grant of an older version");
    assert.equal(accounts.stamp("AccessToken", { accountId: "uid-a" }), undefined);
    assert.ok(await accounts.valid("Grant", { accountId: "uid-a" }, stamp));
    assert.ok(await accounts.valid("AccessToken", { accountId: "uid-a" }, undefined));
    assert.ok(await accounts.valid("Interaction", {}, undefined));
    assert.equal(await accounts.valid("Session", { accountId: "uid-b" }, undefined), false);
    index.reset([user("alice", "uid-a", { username: "alice", tokenGeneration: 3 })]);
    assert.equal(await accounts.valid("Grant", { accountId: "uid-a" }, stamp), false);
    assert.ok(await accounts.valid("AccessToken", { accountId: "uid-a" }, undefined));
    index.reset([]);
    assert.equal(await accounts.valid("AccessToken", { accountId: "uid-a" }, undefined), false);
  });

  it("valid() drops a grant written before the user's sessions ended (a password change, disabling the user)", async () => {
    const { index, accounts } = fixture();
    const stamp = accounts.stamp("Grant", { accountId: "uid-a" });
    const annotations = { "management.platform.sh/session-generation": "1" };
    index.reset([user("alice", "uid-a", { username: "alice", tokenGeneration: 2 }, annotations)]);
    assert.equal(await accounts.valid("Grant", { accountId: "uid-a" }, stamp), false);
    assert.ok(await accounts.valid("Grant", { accountId: "uid-a" }, accounts.stamp("Grant", { accountId: "uid-a" })));
  });
});
