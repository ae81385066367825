import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { REPLICAS_PREFIX, ReplicaPresence } from "./replica-presence.ts";

describe("ReplicaPresence", () => {
  it("ReplicaPresence lists live replicas; a silent one drops out and the leader deletes its record", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let now = Date.parse("2026-01-01T00:00:00Z");
    const presence = (identity: string, leading: boolean) =>
      new ReplicaPresence({
        storage,
        identity,
        version: "v1",
        store: "sqlite",
        leading: () => leading,
        intervalMs: 1000,
        now: () => now,
      });
    const a = presence("host-a/1", true);
    const b = presence("host-b/2", false);
    await a.renew();
    await b.renew();
    assert.deepEqual(
      (await a.list()).map((r) => [r.identity, r.leading, r.renewedAt]),
      [
        ["host-a/1", true, "2026-01-01T00:00:00.000Z"],
        ["host-b/2", false, "2026-01-01T00:00:00.000Z"],
      ],
    );
    now += 2000;
    await b.renew();
    now += 1500;
    // a last renewed 3.5 s ago: gone from the list (three intervals), its record left until a leader sweeps it.
    assert.deepEqual(
      (await b.list()).map((r) => r.identity),
      ["host-b/2"],
    );
    assert.equal(await storage.count(REPLICAS_PREFIX), 2);
    const leader = presence("host-c/3", true);
    await leader.renew();
    assert.equal(await storage.count(REPLICAS_PREFIX), 2, "the leader swept a's record");
    await b.stop();
    assert.deepEqual(
      (await leader.list()).map((r) => r.identity),
      ["host-c/3"],
      "a stopped replica deletes its own record",
    );
    await storage.close();
  });
});
