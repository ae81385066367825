import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { eventually } from "../../utils/testing-eventually.ts";
import { EtcdClient } from "./etcd-client.ts";
import { EtcdElection } from "./etcd-election.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "./testing-etcd-cluster.ts";

describe("EtcdElection", { skip: etcdMissing() }, () => {
  let cluster: EtcdCluster;
  before(async () => {
    cluster = await startEtcdCluster({ members: 1 });
  });
  after(() => cluster?.stop());

  const candidate = (key: string, identity: string, client = new EtcdClient({ endpoints: cluster.endpoints })) => {
    const changes: boolean[] = [];
    const election = new EtcdElection({
      client,
      key,
      identity,
      ttlSeconds: 2,
      pollMs: 100,
      onChange: (leading) => changes.push(leading),
    });
    election.start();
    return { election, changes, client };
  };

  it("EtcdElection elects exactly one candidate and hands over at once when the leader stops", async () => {
    const all = ["a", "b", "c"].map((name) => candidate("/election/one", name));
    try {
      await eventually(() => all.some((c) => c.election.leading), "one leads");
      // Several polls later still exactly one.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const leaders = all.filter((c) => c.election.leading);
      assert.equal(leaders.length, 1);
      assert.equal(await leaders[0].election.leader(), ["a", "b", "c"][all.indexOf(leaders[0])]);
      await leaders[0].election.stop();
      assert.deepEqual(leaders[0].changes, [true, false]);
      await eventually(() => all.filter((c) => c !== leaders[0] && c.election.leading).length === 1, "another leads");
    } finally {
      for (const c of all) {
        await c.election.stop();
        await c.client.close();
      }
    }
  });

  it("EtcdElection moves leadership after the lease TTL when the leader can no longer reach etcd", async () => {
    const first = candidate("/election/two", "first");
    await eventually(() => first.election.leading, "the first leads");
    const second = candidate("/election/two", "second");
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(second.election.leading, false);
      // The leader's connection is gone (as if its process hung or was cut off): it cannot renew its lease.
      await first.client.close();
      await eventually(() => !first.election.leading, "the cut-off leader steps down by itself");
      await eventually(() => second.election.leading, "the other takes over once the lease expired");
      assert.equal(await second.election.leader(), "second");
    } finally {
      await first.election.stop();
      await second.election.stop();
      await second.client.close();
    }
  });
});
