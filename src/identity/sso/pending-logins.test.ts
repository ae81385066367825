import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PENDING_TTL_MS, PendingLogins } from "./pending-logins.ts";
import { SeenIds } from "./seen-ids.ts";

const login = (createdMs: number) => ({ connectorId: "oidc", connector: {}, browserDigest: "d", createdMs });

describe("PendingLogins", () => {
  it("take() answers a login once, and never after ten minutes", () => {
    let now = 1_000_000;
    const pending = new PendingLogins(() => now);
    pending.put("a", login(now));
    pending.put("b", login(now));
    assert.equal(pending.take("a")?.connectorId, "oidc");
    assert.equal(pending.take("a"), undefined);
    now += PENDING_TTL_MS + 1;
    assert.equal(pending.take("b"), undefined);
    assert.equal(pending.take("never"), undefined);
  });

  it("put() drops expired logins first", () => {
    let now = 0;
    const pending = new PendingLogins(() => now);
    pending.put("old", login(now));
    now += PENDING_TTL_MS + 1;
    pending.put("new", login(now));
    assert.equal(pending.size, 1);
  });
});

describe("SeenIds", () => {
  it("add() refuses an id already seen until it expires", () => {
    let now = 0;
    const seen = new SeenIds(() => now);
    assert.equal(seen.add("x", 100), true);
    assert.equal(seen.add("x", 100), false);
    assert.equal(seen.has("x"), true);
    now = 100;
    assert.equal(seen.add("x", 200), true);
  });
});
