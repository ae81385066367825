import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { openEtcdStore } from "./etcd/etcd-store.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "./etcd/testing-etcd-cluster.ts";
import { ExpiringRecords, sweepExpired } from "./expiring-records.ts";
import { openSqliteStore } from "./sqlite/sqlite-store.ts";

const PREFIX = "/internal/test/";

describe("ExpiringRecords", () => {
  it("take() answers a value once and nothing once it expired", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let now = 1000;
    const records = new ExpiringRecords<{ n: number }>({ storage, prefix: PREFIX, now: () => now });
    await records.put("a", { n: 1 }, 2000);
    await records.put("b", { n: 2 }, 2000);
    await assert.rejects(records.put("a", { n: 3 }, 2000), /exists/i);
    assert.deepEqual(await records.take("a"), { n: 1 });
    assert.equal(await records.take("a"), undefined);
    now = 2000;
    assert.equal(await records.take("b"), undefined);
    assert.equal(await storage.count(PREFIX), 0, "an expired record taken is deleted too");
    await storage.close();
  });

  it("claim() is true once per id until the claim expires", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    let now = 0;
    const records = new ExpiringRecords({ storage, prefix: PREFIX, now: () => now });
    assert.equal(await records.claim("id", 50), true);
    assert.equal(await records.claim("id", 500), false);
    now = 50;
    assert.equal(await records.claim("id", 500), true);
    assert.equal(await records.claim("id", 500), false);
    await storage.close();
  });

  it("sweepExpired() deletes expired records only, and reports each", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const records = new ExpiringRecords({ storage, prefix: PREFIX, now: () => 0 });
    await records.put("old", 1, 10);
    await records.put("new", 2, 1000);
    await storage.create(`${PREFIX}forever`, JSON.stringify({ note: "no expiresAt" }));
    const deleted: string[] = [];
    const count = await sweepExpired({
      storage,
      prefix: PREFIX,
      now: () => 100,
      deleted: async (record) => {
        deleted.push(record.key);
      },
    });
    assert.equal(count, 1);
    assert.deepEqual(deleted, [records.keyOf("old")]);
    assert.equal(await storage.count(PREFIX), 2);
    await storage.close();
  });
});

describe("ExpiringRecords on two clients of one etcd", { skip: etcdMissing() }, () => {
  let cluster: EtcdCluster;
  before(async () => {
    cluster = await startEtcdCluster({ members: 1 });
  });
  after(() => cluster?.stop());

  it("take() and claim() racing on two replicas succeed on exactly one", async () => {
    const open = () => openEtcdStore({ endpoints: cluster.endpoints, prefix: "/expiring" });
    const stores = [await open(), await open()];
    try {
      const [a, b] = stores.map((storage) => new ExpiringRecords<string>({ storage, prefix: PREFIX }));
      for (let i = 0; i < 20; i++) {
        await a.put(`login-${i}`, `value-${i}`, Date.now() + 60_000);
        const taken = await Promise.all([a.take(`login-${i}`), b.take(`login-${i}`)]);
        assert.deepEqual(
          taken.filter((value) => value !== undefined),
          [`value-${i}`],
        );
        const claims = await Promise.all([
          a.claim(`id-${i}`, Date.now() + 60_000),
          b.claim(`id-${i}`, Date.now() + 60_000),
        ]);
        assert.deepEqual(claims.filter(Boolean), [true]);
      }
    } finally {
      for (const store of stores) await store.close();
    }
  });
});
