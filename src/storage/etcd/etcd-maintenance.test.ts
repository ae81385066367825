import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { waitFor } from "../../../test/support/wait-for.ts";
import { storageError } from "../conformance-support.ts";
import { toBase64 } from "./etcd-client.ts";
import { EtcdCompactionTurn } from "./etcd-compaction-turn.ts";
import { EtcdMaintenance } from "./etcd-maintenance.ts";
import { type EtcdStore, openEtcdStore } from "./etcd-store.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "./testing-etcd-cluster.ts";

const missing = etcdMissing();

if (missing) {
  test("EtcdMaintenance and EtcdCompactionTurn", { skip: missing }, () => {});
} else {
  describe("etcd maintenance on a 3-member cluster", () => {
    let cluster: EtcdCluster;
    let store: EtcdStore;
    let maintenance: EtcdMaintenance;

    before(async () => {
      cluster = await startEtcdCluster({ members: 3 });
      store = await openEtcdStore({ endpoints: cluster.endpoints, prefix: "/maintenance-test" });
      maintenance = new EtcdMaintenance({ endpoints: cluster.endpoints });
    });
    after(async () => {
      await maintenance?.close();
      await store?.close();
      await cluster?.stop();
    });

    /**
     * memberSizes() once the cluster is settled: every member answers and exactly one says it leads. On a loaded
     * machine a member can miss heartbeats and start an election (none leads, or the old leader still thinks it does);
     * the test waits that out (up to a minute) instead of reading the cluster mid-election.
     */
    async function settledSizes(): ReturnType<EtcdMaintenance["memberSizes"]> {
      let sizes: Awaited<ReturnType<EtcdMaintenance["memberSizes"]>> = [];
      await waitFor(
        async () => {
          sizes = await maintenance.memberSizes();
          return sizes.every((s) => s.error === undefined) && sizes.filter((s) => s.leader).length === 1;
        },
        "every etcd member to answer, exactly one of them leading",
        60,
      );
      return sizes;
    }

    /** Writes and deletes `count` keys of 1 KiB in transactions of 100, then compacts: free pages in every member. */
    async function churn(count: number): Promise<void> {
      const value = toBase64("v".repeat(1024));
      for (const op of ["put", "delete"]) {
        for (let start = 0; start < count; start += 100) {
          const ops = Array.from({ length: 100 }, (_, i) => {
            const key = toBase64(store.keys.key(`/churn/${start + i}`));
            return op === "put" ? { request_put: { key, value } } : { request_delete_range: { key } };
          });
          await store.client.call("/v3/kv/txn", { success: ops });
        }
      }
      // physical: answers once the member that took the call has dropped the compacted revisions; the others
      // compact as they apply it, a little later (see freedSizes()).
      await store.client.call("/v3/kv/compaction", { revision: String(await header()), physical: true });
    }

    /**
     * settledSizes() once every member shows more than 4 MiB free after churn(): the followers free their pages when
     * they apply the compaction, which may be after the call answered (ci43 read one member before it had).
     */
    async function freedSizes(): ReturnType<EtcdMaintenance["memberSizes"]> {
      let sizes: Awaited<ReturnType<EtcdMaintenance["memberSizes"]>> = [];
      await waitFor(
        async () => {
          sizes = await settledSizes();
          return sizes.every((size) => size.sizeBytes - size.inUseBytes > 4 * 1024 * 1024);
        },
        "compaction to free pages in every member",
        120,
      );
      return sizes;
    }

    async function header(): Promise<number> {
      const answer = await store.client.call<{ header?: { revision?: string } }>("/v3/kv/range", {
        key: toBase64(store.keys.base),
        count_only: true,
      });
      return Number(answer.header?.revision ?? 0);
    }

    test("EtcdMaintenance.memberSizes() lists every member once, with its database size and the leader", async () => {
      const sizes = await settledSizes();
      assert.equal(sizes.length, 3);
      assert.equal(new Set(sizes.map((s) => s.id)).size, 3);
      assert.equal(sizes.filter((s) => s.leader).length, 1);
      for (const size of sizes)
        assert.ok(size.sizeBytes > 0 && size.inUseBytes > 0 && size.inUseBytes <= size.sizeBytes);
      const stats = await maintenance.stats({ revision: 1, compactedRevision: 0 });
      assert.equal(stats.backend, "etcd");
      // A young member's file still grows as it applies the log (ci35: 20480 before, 24576 by the stats), and
      // nothing here defragments: the largest file between the two readings is what stats() must report.
      const later = await maintenance.memberSizes();
      assert.ok(stats.sizeBytes >= Math.max(...sizes.map((s) => s.sizeBytes)), String(stats.sizeBytes));
      assert.ok(stats.sizeBytes <= Math.max(...later.map((s) => s.sizeBytes)), String(stats.sizeBytes));
    });

    test("EtcdMaintenance.defragment() does the members past the policy one at a time, the leader last", async () => {
      await churn(6000);
      const before = await freedSizes();
      assert.deepEqual(
        await maintenance.defragment({ freeShare: 0, minFreeBytes: 2 ** 40 }),
        [],
        "none has 1 TiB free",
      );
      const runs = await maintenance.defragment({ freeShare: 0.3, minFreeBytes: 1024 * 1024 });
      assert.equal(runs.length, 3);
      const leader = before.find((s) => s.leader)!;
      assert.equal(runs[2].member, leader.endpoint, "the leader last");
      for (let i = 1; i < runs.length; i++) {
        assert.ok(runs[i].at.getTime() >= runs[i - 1].at.getTime() + runs[i - 1].durationMs - 1, "never two at once");
      }
      const afterwards = await settledSizes();
      for (const size of afterwards) {
        const was = before.find((s) => s.endpoint === size.endpoint)!;
        assert.ok(size.sizeBytes < was.sizeBytes / 2, `${size.endpoint}: ${was.sizeBytes} -> ${size.sizeBytes}`);
      }
      assert.ok(runs.every((run) => run.freedBytes > 0));
    });

    test("EtcdMaintenance.defragment() disarms etcd's NOSPACE alarm, so writes work again", async () => {
      const member = (await maintenance.memberSizes())[0];
      await store.client.call("/v3/maintenance/alarm", {
        action: "ACTIVATE",
        memberID: BigInt(`0x${member.id}`).toString(),
        alarm: "NOSPACE",
      });
      const refused = await storageError(store.create("/alarm/a", "v"), "NoSpace");
      assert.match(refused.message, /etcd is out of space/);
      // What an operator would do: compact (nothing to drop here), defragment; the alarm goes with the round.
      assert.equal((await maintenance.defragment({ freeShare: 0, minFreeBytes: 0 })).length, 3);
      await store.create("/alarm/b", "v");
      assert.equal(await maintenance.disarmNoSpace(), 0, "no alarm left");
    });

    test("EtcdCompactionTurn.take() lets one replica compact per turn and teaches the others", async () => {
      const a = new EtcdCompactionTurn({ client: store.client, keys: store.keys });
      const b = new EtcdCompactionTurn({ client: store.client, keys: store.keys });
      assert.equal(await a.take(10), true, "the first to ask a fresh record takes the turn");
      assert.equal(await b.take(10), false, "the other, in the same interval, does not ...");
      assert.equal(await b.take(11), true, "... and takes the next one, having learned the version");
      assert.equal(await a.take(11), false, "a was overtaken");
      const record = await store.client.call<{ kvs?: { value?: string; version?: string }[] }>("/v3/kv/range", {
        key: toBase64(`${store.keys.prefix}/meta/compaction`),
      });
      assert.equal(Buffer.from(record.kvs?.[0]?.value ?? "", "base64").toString(), "11");
      assert.equal(record.kvs?.[0]?.version, "2");
    });
  });
}
