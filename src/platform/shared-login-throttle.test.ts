import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LoginThrottle } from "../auth/login-throttle.ts";
import { openEtcdStore } from "../storage/etcd/etcd-store.ts";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "../storage/etcd/testing-etcd-cluster.ts";
import { eventually } from "../utils/testing-eventually.ts";
import { CLIENT_AUTH_FAILURES_PREFIX, shareLoginThrottle } from "./shared-login-throttle.ts";

/** Resolves once `check` holds (a watch brings the other replica's count). */
const until = (check: () => boolean) => eventually(check, "the other replica's count");

describe("shareLoginThrottle()", { skip: etcdMissing() }, () => {
  let cluster: EtcdCluster;
  before(async () => {
    cluster = await startEtcdCluster({ members: 1 });
  });
  after(() => cluster?.stop());

  it("shareLoginThrottle() counts failures on every replica together and clears them on success", async () => {
    const open = () => openEtcdStore({ endpoints: cluster.endpoints, prefix: "/throttle" });
    const stores = [await open(), await open()];
    const throttles = stores.map(() => new LoginThrottle({ failuresPerUsername: 4, failuresPerAddress: 100 }));
    const shared = await Promise.all(
      stores.map((storage, i) => shareLoginThrottle({ storage, throttle: throttles[i] })),
    );
    try {
      const [a, b] = throttles;
      a.failed("alice", "10.0.0.1");
      a.failed("alice", "10.0.0.1");
      b.failed("alice", "10.0.0.2");
      assert.equal(b.retryAfter("alice", undefined), 0, "three failures: not yet");
      await until(() => a.retryAfter("alice", undefined) === 0);
      b.failed("alice", "10.0.0.2");
      // Four failures in all, two on each replica: both refuse the next attempt.
      await until(() => a.retryAfter("alice", undefined) > 0 && b.retryAfter("alice", undefined) > 0);
      assert.equal(a.retryAfter("bob", undefined), 0, "other usernames are not throttled");
      a.succeeded("alice");
      await until(() => b.retryAfter("alice", undefined) === 0);
    } finally {
      for (const s of shared) s.close();
      for (const store of stores) await store.close();
    }
  });

  it("shareLoginThrottle() loses no failure of a burst on two replicas (each folds its own into few writes)", async () => {
    const open = () => openEtcdStore({ endpoints: cluster.endpoints, prefix: "/throttle-burst" });
    const stores = [await open(), await open()];
    const now = () => 1_800_000_000_000;
    const throttles = stores.map(
      () => new LoginThrottle({ failuresPerPair: 1000, failuresPerUsername: 59, failuresPerAddress: 1000, now }),
    );
    const shared = await Promise.all(
      stores.map((storage, i) =>
        shareLoginThrottle({ storage, throttle: throttles[i], prefix: CLIENT_AUTH_FAILURES_PREFIX }),
      ),
    );
    try {
      for (let i = 0; i < 30; i++) for (const throttle of throttles) throttle.failed("wiki", undefined);
      const stored = async () => {
        const { records } = await stores[0].list({ prefix: `${CLIENT_AUTH_FAILURES_PREFIX}username/` });
        return records.length === 1 ? (JSON.parse(records[0].value) as { failures: number }).failures : 0;
      };
      await eventually(async () => (await stored()) >= 60, "sixty failures stored");
      assert.equal(await stored(), 60);
      // Sixty failures against a limit of 59: both replicas ask for the second doubling (2 s).
      await until(() => throttles.every((throttle) => throttle.retryAfter("wiki", undefined) === 2));
    } finally {
      for (const s of shared) s.close();
      for (const store of stores) await store.close();
    }
  });
});
