import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openSqliteStore } from "../../storage/sqlite/sqlite-store.ts";
import { OIDC_PREFIX, OidcStore } from "./store-adapter.ts";

const TOKEN = "opaque-access-token-value-3f9a";

async function keysOf(storage: Awaited<ReturnType<typeof openSqliteStore>>): Promise<string[]> {
  return (await storage.list({ prefix: OIDC_PREFIX })).records.map((record) => record.key);
}

describe("OidcStore", () => {
  it("adapterFor() stores an artifact under the digest of its id, never the id (a token) itself", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const store = new OidcStore({ storage });
    const tokens = store.adapterFor("AccessToken");
    await tokens.upsert(TOKEN, { accountId: "u1", grantId: "g1", clientId: "c" }, 60);
    assert.deepEqual(await tokens.find(TOKEN), { accountId: "u1", grantId: "g1", clientId: "c" });
    assert.equal(await tokens.find("another"), undefined);
    const keys = await keysOf(storage);
    assert.equal(keys.length, 2, "the artifact and its grant pointer");
    for (const key of keys) assert.equal(key.includes(TOKEN) || key.includes("g1"), false, key);
    const values = (await storage.list({ prefix: OIDC_PREFIX })).records.map((record) => record.value).join();
    assert.equal(values.includes(TOKEN), false);
    await storage.close();
  });

  it("find() treats an expired artifact as absent and sweep() deletes it with its pointers", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let now = 1_000_000;
    const store = new OidcStore({ storage, now: () => now });
    const sessions = store.adapterFor("Session");
    await sessions.upsert("s1", { uid: "uid-1", accountId: "u1" }, 10);
    await sessions.upsert("s2", { uid: "uid-2", accountId: "u1" }, 100);
    assert.deepEqual(await sessions.findByUid("uid-1"), { uid: "uid-1", accountId: "u1" });
    now += 11_000;
    assert.equal(await sessions.find("s1"), undefined);
    assert.equal(await sessions.findByUid("uid-1"), undefined);
    assert.equal(await store.sweep(), 2, "the session and its uid index");
    assert.equal((await keysOf(storage)).length, 2);
    assert.deepEqual(await sessions.findByUid("uid-2"), { uid: "uid-2", accountId: "u1" });
    await storage.close();
  });

  it("consume() marks an artifact consumed and destroy() removes it", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const store = new OidcStore({ storage, now: () => 5_000_000 });
    const codes = store.adapterFor("AuthorizationCode");
    await codes.upsert("code-1", { grantId: "g", accountId: "u" }, 60);
    await codes.consume("code-1");
    assert.equal((await codes.find("code-1"))?.consumed, 5_000);
    await codes.destroy("code-1");
    assert.equal(await codes.find("code-1"), undefined);
    assert.deepEqual(await keysOf(storage), []);
    await codes.destroy("code-1");
    await codes.consume("code-1");
    await storage.close();
  });

  it("consume() a second time (two redemptions racing) is invalid_grant and revokes the grant", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    // Two replicas: two stores over one storage.
    const [one, two] = [new OidcStore({ storage }), new OidcStore({ storage })];
    await one.adapterFor("AuthorizationCode").upsert("code-2", { grantId: "g2", accountId: "u" }, 60);
    await one.adapterFor("AccessToken").upsert("at-2", { grantId: "g2", accountId: "u" }, 60);
    const outcomes = await Promise.allSettled([
      one.adapterFor("AuthorizationCode").consume("code-2"),
      two.adapterFor("AuthorizationCode").consume("code-2"),
    ]);
    assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1);
    const refused = outcomes.find((o) => o.status === "rejected");
    assert.equal((refused?.reason as { error?: string } | undefined)?.error, "invalid_grant");
    assert.equal(await one.adapterFor("AccessToken").find("at-2"), undefined, "the grant's tokens are revoked");
    await storage.close();
  });

  it("released() hears of consumed, destroyed, revoked and swept artifacts with their stamps", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let now = 1_000_000;
    const heard: string[] = [];
    const store = new OidcStore({
      storage,
      now: () => now,
      stamp: (_model, payload) => `stamp-of-${payload.jti}`,
      released: async (model, _payload, stamp) => {
        heard.push(`${model}:${stamp}`);
      },
    });
    const refresh = store.adapterFor("RefreshToken");
    for (const [id, grantId, ttl] of [
      ["rt-1", "g1", 60],
      ["rt-2", "g1", 60],
      ["rt-3", "g2", 60],
      ["rt-4", "g3", 1],
    ] as const) {
      await refresh.upsert(id, { jti: id, grantId }, ttl);
    }
    assert.equal(await store.stampOf("RefreshToken", "rt-1"), "stamp-of-rt-1");
    await refresh.consume("rt-1");
    await refresh.destroy("rt-3");
    await refresh.revokeByGrantId("g1");
    now += 2000;
    await store.sweep();
    assert.deepEqual(heard.sort(), [
      "RefreshToken:stamp-of-rt-1",
      "RefreshToken:stamp-of-rt-1",
      "RefreshToken:stamp-of-rt-2",
      "RefreshToken:stamp-of-rt-3",
      "RefreshToken:stamp-of-rt-4",
    ]);
    await storage.close();
  });

  it("revokeByGrantId() deletes every artifact of the grant and nothing else", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const store = new OidcStore({ storage });
    const access = store.adapterFor("AccessToken");
    const refresh = store.adapterFor("RefreshToken");
    await access.upsert("at-1", { grantId: "g1" }, 60);
    await refresh.upsert("rt-1", { grantId: "g1" }, 600);
    await access.upsert("at-2", { grantId: "g2" }, 60);
    await refresh.revokeByGrantId("g1");
    assert.equal(await access.find("at-1"), undefined);
    assert.equal(await refresh.find("rt-1"), undefined);
    assert.deepEqual(await access.find("at-2"), { grantId: "g2" });
    assert.equal((await keysOf(storage)).length, 2);
    await storage.close();
  });

  it("upsert() records the stamp and find() asks valid() with it on every read", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let generation = 1;
    const store = new OidcStore({
      storage,
      stamp: (model) => (model === "Grant" ? { generation } : undefined),
      valid: (_model, _payload, stamp) =>
        stamp === undefined || (stamp as { generation: number }).generation === generation,
    });
    const grants = store.adapterFor("Grant");
    await grants.upsert("g1", { accountId: "u1" }, 60);
    assert.deepEqual(await grants.find("g1"), { accountId: "u1" });
    generation = 2;
    assert.equal(await grants.find("g1"), undefined);
    await grants.upsert("g1", { accountId: "u1" }, 60);
    assert.deepEqual(await grants.find("g1"), { accountId: "u1" });
    await storage.close();
  });
});
