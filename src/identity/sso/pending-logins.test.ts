import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openSqliteStore } from "../../storage/sqlite/sqlite-store.ts";
import { PENDING_LOGINS_PREFIX, PENDING_TTL_MS, PendingLogins } from "./pending-logins.ts";
import { SEEN_IDS_PREFIX, SeenIds } from "./seen-ids.ts";

const login = (createdMs: number) => ({
  connectorId: "oidc",
  connector: { verifier: "pkce-verifier-0123456789" },
  browserDigest: "d",
  createdMs,
});

describe("PendingLogins", () => {
  it("take() answers a login once, and never after ten minutes", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let now = 1_000_000;
    const pending = new PendingLogins({ storage, now: () => now });
    await pending.put("state-a", login(now));
    await pending.put("state-b", login(now));
    assert.deepEqual(await pending.take("state-a"), login(1_000_000));
    assert.equal(await pending.take("state-a"), undefined);
    now += PENDING_TTL_MS + 1;
    assert.equal(await pending.take("state-b"), undefined);
    assert.equal(await pending.take("never"), undefined);
    await storage.close();
  });

  it("put() keeps a login in the store under the digest of its state, never the state itself", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const pending = new PendingLogins({ storage });
    await pending.put("the-secret-state-value", login(Date.now()));
    const { records } = await storage.list({ prefix: PENDING_LOGINS_PREFIX });
    assert.equal(records.length, 1);
    assert.equal(records[0].key.includes("the-secret-state-value"), false);
    assert.equal(records[0].value.includes("the-secret-state-value"), false);
    // Another process on the store (a replica, or this one after a restart) finishes the login.
    assert.equal((await new PendingLogins({ storage }).take("the-secret-state-value"))?.connectorId, "oidc");
    await storage.close();
  });

  it("put() past the cap drops the oldest login this replica started", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const now = 5_000_000;
    const pending = new PendingLogins({ storage, now: () => now, maxPending: 2 });
    for (const state of ["s1", "s2", "s3"]) await pending.put(state, login(now));
    assert.equal(pending.startedHere, 2);
    assert.equal(await storage.count(PENDING_LOGINS_PREFIX), 2);
    assert.equal(await pending.take("s1"), undefined);
    assert.equal((await pending.take("s3"))?.connectorId, "oidc");
    await storage.close();
  });
});

describe("SeenIds", () => {
  it("add() refuses an id already seen until it expires, on any SeenIds of the store", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let now = 0;
    const seen = new SeenIds({ storage, now: () => now });
    const other = new SeenIds({ storage, now: () => now });
    assert.equal(await seen.add("saml/_assertion-1", 100), true);
    assert.equal(await seen.add("saml/_assertion-1", 100), false);
    assert.equal(await other.add("saml/_assertion-1", 100), false);
    assert.equal(await other.add("saml/_assertion-2", 100), true);
    now = 100;
    assert.equal(await other.add("saml/_assertion-1", 200), true);
    const { records } = await storage.list({ prefix: SEEN_IDS_PREFIX });
    assert.equal(
      records.some((record) => record.key.includes("assertion")),
      false,
    );
    await storage.close();
  });
});
