// The store stays small with no manual step: 100,000 objects created and deleted (in waves, 2,000 live objects
// beside them) leave the store within 2x the size its live objects take in a fresh store, through the platform's
// own housekeeping (compaction by retention on the leader, then SQLite's incremental vacuum and WAL truncation, or
// etcd's member-by-member defragmentation). The churn drives the KeyValueStore directly (the point is the store;
// test/store-housekeeping.test.ts churns through HTTPS); on etcd the 100,000 go as transactions of 100 keys (one
// transaction per key runs at about 1,000/s on this machine), plus 2,000 through the store's own create and delete.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { EtcdMaintenance } from "../storage/etcd/etcd-maintenance.ts";
import { type EtcdStore, openEtcdStore } from "../storage/etcd/etcd-store.ts";
import { etcdMissing, startEtcdCluster } from "../storage/etcd/testing-etcd-cluster.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import type { KeyValueStore } from "../storage/types.ts";
import {
  churn,
  createLive,
  curveTable,
  etcdTransactionWriter,
  quickHousekeeping,
  readUntil,
  sampleValue,
  storeWriter,
} from "./testing-store-churn.ts";

const TOTAL = 100_000;
/** How long housekeeping may take to bring the store back: it only ends a test that will never pass (a loaded
 * machine slows every compaction and defragmentation down). */
const SETTLE_MS = 600_000;
const LIVE = 2_000;
const VALUE = sampleValue(500);
const root = mkdtempSync(join(tmpdir(), "store-churn-"));
after(() => rmSync(root, { recursive: true, force: true }));

test("the platform's housekeeping keeps a SQLite store within 2x its live size through 100,000 creates and deletes", async (t) => {
  const dataDir = join(root, "sqlite");
  mkdirSync(dataDir);
  const store = await openSqliteStore({ path: join(dataDir, "platform.db") });
  const running = await quickHousekeeping({ storage: store, dataDir });
  try {
    await createLive(store, LIVE, VALUE);
    const curve = await churn({
      total: TOTAL,
      wave: 10_000,
      concurrency: 4,
      batch: 250,
      prefix: "/churn/",
      value: VALUE,
      writer: storeWriter(store),
      size: () => store.stats!(),
    });
    const live = await freshSqliteSize(join(root, "fresh.db"));
    const settled = await readUntil(
      () => store.stats!(),
      (s) => s.sizeBytes <= 2 * live,
      SETTLE_MS,
    );
    curve.push({ operations: 2 * TOTAL, sizeBytes: settled.sizeBytes, inUseBytes: settled.inUseBytes });
    t.diagnostic(`live objects in a fresh store: ${live} bytes; after the churn, settled:\n${curveTable(curve)}`);
    assert.ok(settled.sizeBytes <= 2 * live, `${settled.sizeBytes} bytes on disk for ${live} bytes of live data`);
    assert.ok(Math.max(...curve.map((p) => p.sizeBytes)) > 2 * live, "the churn did grow the store meanwhile");
    assert.ok(settled.lastReclaim && settled.lastReclaim.freedBytes > 0, "the vacuum returned pages");
    assert.equal(await store.count("/live/"), LIVE);
    assert.equal(await store.count("/churn/"), 0);
  } finally {
    await running.stop();
    await store.close();
  }
});

/** The size of a fresh store file holding the live objects (no history, no WAL). */
async function freshSqliteSize(path: string): Promise<number> {
  const fresh = await openSqliteStore({ path });
  await createLive(fresh, LIVE, VALUE);
  await fresh.close();
  return statSync(path).size;
}

const missing = etcdMissing();

test("the platform's housekeeping keeps etcd within 2x its live size through 100,000 creates and deletes, defragmenting one member at a time", {
  skip: missing,
}, async (t) => {
  const cluster = await startEtcdCluster({ members: 3 });
  const dataDir = mkdtempSync(join(root, "etcd-"));
  let store: EtcdStore | undefined;
  let running: Awaited<ReturnType<typeof quickHousekeeping>> | undefined;
  const maintenance = new EtcdMaintenance({ endpoints: cluster.endpoints, requestTimeoutMs: 90_000 });
  try {
    store = await openEtcdStore({ endpoints: cluster.endpoints, prefix: "/churn-test", requestTimeoutMs: 90_000 });
    const etcd = store;
    running = await quickHousekeeping({ storage: etcd, etcd: { store: etcd, endpoints: cluster.endpoints }, dataDir });
    const size = async () => {
      const stats = await maintenance.stats({ revision: 0, compactedRevision: 0 });
      return { sizeBytes: stats.sizeBytes, inUseBytes: stats.inUseBytes };
    };
    await createLive(etcd, LIVE, VALUE);
    // The store's own path, then the bulk in transactions of 100 keys.
    const own = await churn({
      total: 2_000,
      wave: 2_000,
      concurrency: 8,
      batch: 50,
      prefix: "/own/",
      value: VALUE,
      writer: storeWriter(etcd),
      size,
    });
    const curve = await churn({
      total: TOTAL,
      wave: 20_000,
      concurrency: 8,
      batch: 100,
      prefix: "/churn/",
      value: VALUE,
      writer: etcdTransactionWriter(etcd),
      size,
    });
    const live = await freshEtcdSize();
    // Settled: the largest member within 2x, and housekeeping's pass over every member done.
    const defragmented = () => running!.housekeeping.defragRuns.length >= 3;
    const settled = await readUntil(size, (s) => s.sizeBytes <= 2 * live && defragmented(), SETTLE_MS);
    curve.push({ operations: 2 * TOTAL, ...settled });
    t.diagnostic(
      `live objects in a fresh etcd: ${live} bytes; after 2,000 own and the bulk:\n${curveTable(own)}\n${curveTable(curve)}`,
    );
    assert.ok(settled.sizeBytes <= 2 * live, `${settled.sizeBytes} bytes on the largest member for ${live} live`);
    const runs = [...running.housekeeping.defragRuns];
    assert.ok(runs.length >= 3, `every member was defragmented: ${JSON.stringify(runs)}`);
    for (let i = 1; i < runs.length; i++) {
      const previousEnd = runs[i - 1].at.getTime() + runs[i - 1].durationMs;
      assert.ok(runs[i].at.getTime() >= previousEnd - 1, "one member at a time, never two at once");
    }
    assert.equal(await etcd.count("/live/"), LIVE);
    assert.equal(await etcd.count("/churn/"), 0);
  } finally {
    await maintenance.close();
    await running?.stop();
    await store?.close();
    await cluster.stop();
  }
});

/** The database size of a fresh one-member etcd holding the live objects, defragmented (no slack). */
async function freshEtcdSize(): Promise<number> {
  const cluster = await startEtcdCluster({ members: 1 });
  const store: KeyValueStore = await openEtcdStore({
    endpoints: cluster.endpoints,
    prefix: "/churn-test",
    requestTimeoutMs: 90_000,
  });
  const maintenance = new EtcdMaintenance({ endpoints: cluster.endpoints, requestTimeoutMs: 90_000 });
  try {
    await createLive(store, LIVE, VALUE);
    await maintenance.defragment({ freeShare: 0, minFreeBytes: 0 });
    return (await maintenance.memberSizes())[0].sizeBytes;
  } finally {
    await maintenance.close();
    await store.close();
    await cluster.stop();
  }
}
