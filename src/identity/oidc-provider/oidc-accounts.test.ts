import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DIGEST_PREFIX } from "../../apis/management/v1/ownedaccesskey-secrets.ts";
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
      // Set by an admin or by alice herself: nobody verified it.
      email_verified: false,
      groups: ["corp-team", "dev", "ops"],
    });
    const bob = accounts.userByUid("uid-b");
    assert.ok(bob);
    assert.deepEqual(accounts.claims(bob), { sub: "uid-b", preferred_username: "bob", name: "bob", groups: ["other"] });
  });

  it("claims() says email_verified true only while spec.email is the address spec.verifiedEmail records", () => {
    const index = new AuthIndex();
    const accounts = new OidcAccounts({ index, fresh: async () => {} });
    index.reset([user("carl", "uid-c", { email: "Carl@Example.com", verifiedEmail: "carl@example.com" })]);
    assert.equal(accounts.claims(accounts.userByUid("uid-c")!).email_verified, true);
    index.reset([user("carl", "uid-c", { email: "ceo@example.com", verifiedEmail: "carl@example.com" })]);
    assert.equal(accounts.claims(accounts.userByUid("uid-c")!).email_verified, false);
  });

  it("claims() adds the newest SSO login's allowed claims and the admin's extraClaims over them, never a reserved one", () => {
    const index = new AuthIndex();
    const allowed = ["department", "team", "email_verified"];
    const accounts = new OidcAccounts({ index, fresh: async () => {}, ssoClaimNames: () => allowed });
    const loginKey = (name: string, created: string, extraClaims: Record<string, string[]>) =>
      record(`/management.platform.sh/ownedaccesskeys//${name}`, {
        metadata: { name, uid: name, creationTimestamp: created },
        spec: {
          type: "Login",
          user: "dee",
          key: `${DIGEST_PREFIX}${name}`,
          identity: { connector: "oidc", extraClaims },
        },
      });
    index.reset([
      user("dee", "uid-d", { email: "dee@example.com", extraClaims: { team: "platform", sub: "someone-else" } }),
      loginKey("old", "2026-01-01T00:00:00Z", { department: ["sales"] }),
      loginKey("new", "2026-02-01T00:00:00Z", {
        department: ["engineering"],
        team: ["web"],
        secret: ["not allowed"],
        email_verified: ["true"],
      }),
    ]);
    const claims = accounts.claims(accounts.userByUid("uid-d")!);
    assert.deepEqual(claims.department, ["engineering"]);
    assert.equal(claims.team, "platform", "the admin's value wins");
    assert.equal(claims.sub, "uid-d");
    assert.equal(claims.email_verified, false);
    assert.equal(claims.secret, undefined);
    assert.deepEqual(accounts.extraClaimNames(), ["department", "team"]);
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
