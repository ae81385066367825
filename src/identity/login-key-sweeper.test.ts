import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LoginKeySweeper } from "./login-key-sweeper.ts";
import { type AuthFixture, openAuthFixture, platform } from "./testing.ts";

describe("LoginKeySweeper", () => {
  let f: AuthFixture;
  const removed: string[] = [];
  const clock = { now: 0 };
  let sweeper: LoginKeySweeper;

  before(async () => {
    f = await openAuthFixture();
    sweeper = new LoginKeySweeper({
      index: f.index,
      loginTTLSeconds: () => f.settings.current().auth.loginAccessKeyTTLSeconds,
      remove: async (key) => {
        removed.push(key.name);
      },
      now: () => clock.now,
    });
    await f.createUser("bob");
    await f.createKey("login-old", { user: "bob", type: "Login" });
    await f.createKey("ci", { user: "bob", type: "User" });
    await f.createKey("ci-short", { user: "bob", type: "User", ttl: 3600 });
    await f.createKey("grafana-refresh", { user: "bob", type: "OIDCRefreshToken", ttl: 14 * 24 * 3600 });
    await f.createKey("argo-refresh", { user: "bob", type: "OIDCRefreshToken", ttl: 30 * 24 * 3600 });
    await f.informer.fresh();
    clock.now = Date.now();
  });
  after(() => f.close());

  it("sweep() deletes Login keys older than loginAccessKeyTTLSeconds and refresh-token keys past their ttl, never other keys", async () => {
    assert.equal(await sweeper.sweep(), 0);
    clock.now += 20 * 24 * 3600 * 1000 + 1000;
    assert.equal(await sweeper.sweep(), 2);
    assert.deepEqual(removed.sort(), ["grafana-refresh", "login-old"]);
  });

  it("sweep() keeps Login keys forever when the ttl is 0 (a refresh-token key's own ttl still counts)", async () => {
    removed.length = 0;
    const settings = structuredClone(f.settings.current());
    settings.auth.loginAccessKeyTTLSeconds = 0;
    f.settings.update(settings);
    assert.equal(await sweeper.sweep(), 1);
    assert.deepEqual(removed, ["grafana-refresh"]);
  });

  it("sweep() deletes Login and refresh-token keys a tokenGeneration change revoked", async () => {
    removed.length = 0;
    await f.createKey("login-new", { user: "bob", type: "Login" });
    await f.users.patch(platform(), { name: "bob" }, "merge", { spec: { tokenGeneration: 1 } }, {});
    await f.informer.fresh();
    await sweeper.sweep();
    // The fake remove() leaves the keys in place: every due key is named, the expired ones again.
    assert.deepEqual(removed.sort(), ["argo-refresh", "grafana-refresh", "login-new", "login-old"]);
  });
});
