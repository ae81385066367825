import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { AuthenticationRequest } from "../auth/types.ts";
import { statusErrorOf } from "../registry/testing.ts";
import { principalOf } from "./principal.ts";
import { type AuthFixture, openAuthFixture, platform } from "./testing.ts";

const header = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

describe("AccessKeyAuthenticator", () => {
  let f: AuthFixture;
  /** authenticate() answers synchronously when a request is not for it; tests always want a promise. */
  const authenticate = async (request: AuthenticationRequest) => f.authenticator.authenticate(request);
  const rejects = async (token: string, message: RegExp | string) => {
    const error = await statusErrorOf(authenticate(header(token)));
    assert.equal(error.code, 401);
    assert.equal(error.reason, "Unauthorized");
    if (typeof message === "string") assert.equal(error.message, message);
    else assert.match(error.message, message);
  };
  const patchKey = (name: string, spec: Record<string, unknown>) =>
    f.keys.patch(platform(), { name }, "merge", { spec }, {});
  const patchUser = (name: string, spec: Record<string, unknown>) =>
    f.users.patch(platform(), { name }, "merge", { spec }, {});

  before(async () => {
    f = await openAuthFixture();
    await f.createUser("bob", { groups: ["devs", "system:masters"] });
    await f.createTeam("platform-team", { groups: ["devs"], clusterRoles: [{ name: "viewer" }] });
  });
  after(() => f.close());

  it("authenticate() ignores a request without credentials and rejects a malformed header", async () => {
    assert.equal(await f.authenticator.authenticate({ headers: {} }), undefined);
    for (const value of ["Basic abc", "Bearer", "Bearer two words"]) {
      const error = await statusErrorOf(authenticate({ headers: { authorization: value } }));
      assert.equal(error.code, 401);
      assert.equal(error.message, "invalid bearer token");
    }
    await rejects("x".repeat(2000), "invalid bearer token");
  });

  it("authenticate() rejects an unknown key", async () => {
    await rejects("not-a-key-of-this-platform-at-all-0123456789", "Access key not found. Please login again");
  });

  it("authenticate() resolves a user key to the user, its teams and effective groups", async () => {
    const key = await f.createKey("bob-1", { user: "bob" });
    const user = (await f.authenticator.authenticate(header(key)))!;
    assert.equal(user.name, "bob");
    // Own groups plus team names; "system:" groups never come from a user.
    assert.deepEqual(user.groups, ["devs", "platform-team", "system:authenticated"]);
    assert.deepEqual(user.extra?.["management.platform.sh/access-key"], ["bob-1"]);
    const principal = principalOf(user)!;
    assert.equal(principal.kind, "User");
    assert.ok(principal.roles.has("viewer"));
    assert.equal(Object.isFrozen(user), true);
  });

  it("authenticate() rejects a disabled key on the very next request", async () => {
    const key = await f.createKey("bob-disabled", { user: "bob" });
    await f.authenticator.authenticate(header(key));
    await patchKey("bob-disabled", { disabled: true });
    await rejects(key, "access key is disabled");
  });

  it("authenticate() rejects a key past its ttl, counted from creation", async () => {
    const key = await f.createKey("bob-ttl", { user: "bob", ttl: 60 });
    await f.authenticator.authenticate(header(key));
    const start = f.clock.now;
    // The key's creationTimestamp is the store's real time, which has run on since the fixture set its clock (more
    // than a second on a loaded machine: ci29), so the test clock moves past the real now, not past its own start.
    f.clock.now = Math.max(start, Date.now()) + 61_000;
    try {
      await rejects(key, "access key expired. Please login again");
    } finally {
      f.clock.now = start;
    }
  });

  it("authenticate() counts ttlAfterLastActivity from the last use", async () => {
    const key = await f.createKey("bob-idle", { user: "bob", ttl: 60, ttlAfterLastActivity: true });
    const start = f.clock.now;
    try {
      for (let step = 0; step < 4; step++) {
        f.clock.now += 45_000;
        await f.authenticator.authenticate(header(key));
      }
      f.clock.now += 61_000;
      await rejects(key, "access key expired. Please login again");
    } finally {
      f.clock.now = start;
    }
  });

  it("authenticate() applies the global maximum key life as the settings change", async () => {
    const key = await f.createKey("bob-old", { user: "bob" });
    f.clock.now += 3_600_000;
    try {
      await f.authenticator.authenticate(header(key));
      const settings = structuredClone(f.settings.current());
      settings.auth.accessKeyMaxTTLSeconds = 1800;
      f.settings.update(settings);
      await rejects(key, /older than the maximum access key lifetime/);
    } finally {
      f.clock.now -= 3_600_000;
      const settings = structuredClone(f.settings.current());
      settings.auth.accessKeyMaxTTLSeconds = 0;
      f.settings.update(settings);
    }
  });

  it("authenticate() rejects a Login key older than loginAccessKeyTTLSeconds", async () => {
    const key = await f.createKey("bob-login-old", { user: "bob", type: "Login" });
    f.clock.now += 21 * 24 * 3600 * 1000;
    try {
      await rejects(key, "access key expired. Please login again");
    } finally {
      f.clock.now -= 21 * 24 * 3600 * 1000;
    }
  });

  it("authenticate() rejects every key of the user issued before its tokenGeneration was raised", async () => {
    await f.createUser("gen");
    const login = await f.createKey("gen-login", { user: "gen", type: "Login" });
    const ci = await f.createKey("gen-ci", { user: "gen", type: "User" });
    await patchUser("gen", { tokenGeneration: 1 });
    await rejects(login, /tokenGeneration was raised/);
    await rejects(ci, /tokenGeneration was raised/);
    for (const [name, type] of [
      ["gen-login-2", "Login"],
      ["gen-ci-2", "User"],
    ]) {
      const fresh = await f.createKey(name, { user: "gen", type });
      assert.equal((await f.authenticator.authenticate(header(fresh)))?.name, "gen");
    }
  });

  it("authenticate() ends a user's sessions for good when it is disabled; its other keys come back with it", async () => {
    await f.createUser("dora");
    const login = await f.createKey("dora-login", { user: "dora", type: "Login" });
    const ci = await f.createKey("dora-ci", { user: "dora", type: "User" });
    await patchUser("dora", { disabled: true });
    await rejects(login, "user is disabled");
    await rejects(ci, "user is disabled");
    await patchUser("dora", { disabled: false });
    await rejects(login, /sessions were ended/);
    assert.equal((await f.authenticator.authenticate(header(ci)))?.name, "dora");
    const fresh = await f.createKey("dora-login-2", { user: "dora", type: "Login" });
    assert.equal((await f.authenticator.authenticate(header(fresh)))?.name, "dora");
  });

  it("authenticate() rejects keys of a disabled user, a deleted user and a re-created one", async () => {
    await f.createUser("carol");
    const key = await f.createKey("carol-1", { user: "carol" });
    await patchUser("carol", { disabled: true });
    await rejects(key, "user is disabled");
    await patchUser("carol", { disabled: false });
    await f.authenticator.authenticate(header(key));
    await f.users.delete(platform(), { name: "carol" }, {});
    await rejects(key, "the user of this access key no longer exists");
    // Another person under the same name does not inherit the old keys.
    await f.createUser("carol");
    await rejects(key, "the user of this access key no longer exists");
  });

  it("authenticate() resolves a team key to the team and its roles", async () => {
    const key = await f.createKey("team-key", { team: "platform-team" });
    const user = (await f.authenticator.authenticate(header(key)))!;
    assert.equal(user.name, "team:platform-team");
    assert.equal(principalOf(user)?.kind, "Team");
    assert.ok(principalOf(user)?.roles.has("viewer"));
  });

  it("authenticate() notices team and role changes of the user at once", async () => {
    await f.createUser("dave");
    const key = await f.createKey("dave-1", { user: "dave" });
    assert.equal(principalOf((await f.authenticator.authenticate(header(key)))!)?.roles.size, 0);
    await patchUser("dave", { clusterRoles: [{ name: "admin" }] });
    assert.ok(principalOf((await f.authenticator.authenticate(header(key)))!)?.roles.has("admin"));
  });

  it("authenticate() records activity at most once a minute per key", async () => {
    const key = await f.createKey("bob-activity", { user: "bob" });
    const writes = () => f.activityWrites.filter((name) => name === "bob-activity").length;
    for (let i = 0; i < 20; i++) await f.authenticator.authenticate(header(key));
    assert.equal(writes(), 1);
    f.clock.now += 61_000;
    try {
      for (let i = 0; i < 20; i++) await f.authenticator.authenticate(header(key));
      assert.equal(writes(), 2);
    } finally {
      f.clock.now -= 61_000;
    }
  });
});
