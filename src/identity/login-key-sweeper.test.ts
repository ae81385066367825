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
    await f.informer.fresh();
    clock.now = Date.now();
  });
  after(() => f.close());

  it("sweep() deletes Login keys older than loginAccessKeyTTLSeconds, never other keys", async () => {
    assert.equal(await sweeper.sweep(), 0);
    clock.now += 20 * 24 * 3600 * 1000 + 1000;
    assert.equal(await sweeper.sweep(), 1);
    assert.deepEqual(removed, ["login-old"]);
  });

  it("sweep() keeps Login keys forever when the ttl is 0", async () => {
    removed.length = 0;
    const settings = structuredClone(f.settings.current());
    settings.auth.loginAccessKeyTTLSeconds = 0;
    f.settings.update(settings);
    assert.equal(await sweeper.sweep(), 0);
  });

  it("sweep() deletes Login keys a tokenGeneration change revoked", async () => {
    removed.length = 0;
    await f.createKey("login-new", { user: "bob", type: "Login" });
    await f.users.patch(platform(), { name: "bob" }, "merge", { spec: { tokenGeneration: 1 } }, {});
    await f.informer.fresh();
    await sweeper.sweep();
    assert.deepEqual(removed.sort(), ["login-new", "login-old"]);
  });
});
