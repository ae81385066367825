// Issue 23: a store that stays small. Two measurements, in one run:
//
// 1. Create latency with and without a vacuum step running (SQLite). One store file is prepared once with lots of
//    free pages spread through it (objects created, nine in ten deleted, compacted, with the vacuum off). Each round copies it twice: copy A is
//    opened with the vacuum off (baseline: the same file, the same free pages for creates to reuse), copy B with it
//    on, so its incremental vacuum starts at open; `--callers` concurrent callers create `--creates` objects on each.
//    B counts only the creates that started while its vacuum was still running. Rounds alternate A and B.
// 2. The size curve of the churn test: `--churn` objects created and deleted in waves through the platform's
//    housekeeping (compaction every 200 ms keeping 200 ms), on SQLite and, when etcd is installed, on a 3-member
//    etcd (bulk writes in transactions of 100 keys, as src/platform/store-churn.test.ts does).
// 3. The issue's own measurement: `--users` users created and deleted over HTTPS through a platform process
//    (compaction every 10 s keeping 10 s), its store's size read through `platform store-info`'s control socket
//    before, after the creates, after the deletes and every 2 s until it is back.
//
//   node bench/store-compaction.ts [--rounds 3] [--creates 20000] [--callers 16] [--free-mib 200] [--churn 100000]
//                                  [--users 10000] [--no-etcd]      (0 rounds, churn or users: that part is skipped)

import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { readStoreInfo } from "../src/platform/store-info.ts";
import {
  type ChurnWriter,
  churn,
  createLive,
  curveTable,
  etcdTransactionWriter,
  quickHousekeeping,
  readUntil,
  sampleValue,
  storeWriter,
} from "../src/platform/testing-store-churn.ts";
import { EtcdMaintenance } from "../src/storage/etcd/etcd-maintenance.ts";
import { openEtcdStore } from "../src/storage/etcd/etcd-store.ts";
import { etcdBinary, startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { openSqliteStore } from "../src/storage/sqlite/sqlite-store.ts";
import type { KeyValueStore } from "../src/storage/types.ts";
import { formatBytes } from "../src/utils/byte-size.ts";
import { startPlatformProcess } from "../test/support/platform-process.ts";
import { ApiClient, GROUP_VERSION, USERS_PATH } from "./lib/api.ts";
import { type LatencySummary, summarize } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    creates: { type: "string", default: "20000" },
    callers: { type: "string", default: "16" },
    "free-mib": { type: "string", default: "200" },
    churn: { type: "string", default: "100000" },
    users: { type: "string", default: "10000" },
    "no-etcd": { type: "boolean", default: false },
  },
});
const ROUNDS = Number(values.rounds);
const CREATES = Number(values.creates);
const CALLERS = Number(values.callers);
const FREE_MIB = Number(values["free-mib"]);
const CHURN = Number(values.churn);
const USERS = Number(values.users);
const VALUE = sampleValue(1000);
const dir = mkdtempSync(join(tmpdir(), "bench-store-compaction-"));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

/**
 * A store file with about FREE_MIB of free pages spread through it, the vacuum off while it was made: objects are
 * created in order and nine in ten deleted, so the survivors sit all along the file and the vacuum has to move
 * pages from its end into the holes (the costly case; free pages at the end only need a truncation).
 */
async function prepare(path: string): Promise<void> {
  const store = await openSqliteStore({ path, vacuum: false });
  const writer = storeWriter(store);
  const count = Math.ceil((FREE_MIB * 1024 * 1024) / 1400 / 0.9);
  for (let start = 0; start < count; start += 5000) {
    const keys = Array.from({ length: Math.min(5000, count - start) }, (_, i) => `/object/${start + i}`);
    await writer.create(keys, VALUE);
  }
  for (let start = 0; start < count; start += 5000) {
    const keys = Array.from({ length: Math.min(5000, count - start) }, (_, i) => start + i)
      .filter((i) => i % 10 !== 0)
      .map((i) => `/object/${i}`);
    await writer.delete(keys);
  }
  await store.compact(0);
  const stats = await store.stats!();
  await store.close();
  console.log(`prepared ${path}: ${mib(statSync(path).size)} MiB, ${mib(stats.freeBytes)} MiB free pages`);
}

/** Creates from CALLERS concurrent callers; each sample is one create's latency (ms) and when it started. */
async function createLoad(store: KeyValueStore, round: number): Promise<{ at: number; ms: number }[]> {
  const samples: { at: number; ms: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < CREATES) {
        const i = next++;
        const at = performance.now();
        await store.create(`/bench/${round}/${i}`, VALUE);
        samples.push({ at, ms: performance.now() - at });
      }
    }),
  );
  return samples;
}

/**
 * Every `PRAGMA incremental_vacuum` step's own duration (ms), timed around the statement in this process: tells a
 * long step from a create that waited on something else (a checkpoint, the machine).
 */
const stepTimes: number[] = [];
const exec = DatabaseSync.prototype.exec;
DatabaseSync.prototype.exec = function timedExec(this: DatabaseSync, sql: string) {
  if (!sql.startsWith("PRAGMA incremental_vacuum")) return exec.call(this, sql);
  const started = performance.now();
  try {
    return exec.call(this, sql);
  } finally {
    stepTimes.push(performance.now() - started);
  }
};

interface RoundResult {
  summary: LatencySummary;
  steps?: LatencySummary;
  vacuumMs?: number;
  freedMib?: number;
}

async function roundWithout(prepared: string, round: number): Promise<RoundResult> {
  const path = join(dir, `a-${round}.db`);
  copyFileSync(prepared, path);
  const store = await openSqliteStore({ path, vacuum: false });
  try {
    const samples = await createLoad(store, round);
    return { summary: summarize(samples.map((s) => s.ms)) };
  } finally {
    await store.close();
    rmSync(path, { force: true });
  }
}

async function roundWith(prepared: string, round: number): Promise<RoundResult> {
  const path = join(dir, `b-${round}.db`);
  copyFileSync(prepared, path);
  stepTimes.length = 0;
  const store = await openSqliteStore({ path });
  // When the vacuum run ended (it starts in the first turn after open).
  let ended = Number.POSITIVE_INFINITY;
  const watcher = setInterval(async () => {
    if (ended === Number.POSITIVE_INFINITY && (await store.stats!()).lastReclaim) ended = performance.now();
  }, 5);
  try {
    const samples = await createLoad(store, round);
    const during = samples.filter((s) => s.at < ended).map((s) => s.ms);
    const run = (
      await readUntil(
        () => store.stats!(),
        (s) => s.lastReclaim !== undefined,
        60_000,
      )
    ).lastReclaim;
    return {
      summary: summarize(during),
      steps: summarize(stepTimes),
      vacuumMs: run?.durationMs,
      freedMib: run ? run.freedBytes / 1024 / 1024 : undefined,
    };
  } finally {
    clearInterval(watcher);
    await store.close();
    rmSync(path, { force: true });
  }
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const ms = (value: number | undefined) => (value === undefined ? "-" : value.toFixed(2));

async function latencyComparison(): Promise<void> {
  const prepared = join(dir, "prepared.db");
  await prepare(prepared);
  console.log(`\n## Create latency, ${CALLERS} callers, ${CREATES} creates per round (load ${load()})\n`);
  console.log(
    "| round | create p50 / p99 / max without vacuum (ms) | ... during vacuum (ms) | creates during vacuum | vacuum run | steps: count, p50 / p99 / max (ms) | create p99 ratio |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate which goes first, so a drift in the machine's load does not favour one side.
    const first = round % 2 === 1;
    const a = first ? await roundWithout(prepared, round) : undefined;
    const b = await roundWith(prepared, round);
    const without = a ?? (await roundWithout(prepared, round));
    const s = without.summary;
    const v = b.summary;
    console.log(
      `| ${round} | ${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)} | ${ms(v.p50)} / ${ms(v.p99)} / ${ms(v.max)} | ${v.samples} | ` +
        `${ms(b.vacuumMs)} ms, ${b.freedMib?.toFixed(0)} MiB | ${b.steps?.samples}, ${ms(b.steps?.p50)} / ${ms(b.steps?.p99)} / ${ms(b.steps?.max)} | ${(v.p99 / s.p99).toFixed(2)}x |`,
    );
  }
  console.log(`(load after: ${load()})`);
}

interface CurveRun {
  name: string;
  store: KeyValueStore;
  writer: ChurnWriter;
  size(): Promise<{ sizeBytes: number; inUseBytes: number }>;
  /** Waves, batches in flight and keys per batch. */
  shape: { waves: number; concurrency: number; batch: number };
  settled(size: { sizeBytes: number; inUseBytes: number }): boolean;
}

/** 2,000 live objects, then the churn, then the wait until the store settled; prints the curve. */
async function curve(run: CurveRun): Promise<void> {
  await createLive(run.store, 2000, VALUE);
  const started = performance.now();
  const points = await churn({
    total: CHURN,
    wave: Math.max(1, CHURN / run.shape.waves),
    concurrency: run.shape.concurrency,
    batch: run.shape.batch,
    prefix: "/churn/",
    value: VALUE,
    writer: run.writer,
    size: run.size,
  });
  const churnMs = performance.now() - started;
  const settled = await readUntil(run.size, run.settled, 120_000);
  const settledMs = performance.now() - started - churnMs;
  console.log(
    `\n## Size curve, ${run.name}: ${CHURN.toLocaleString("en")} objects created and deleted (load ${load()})\n`,
  );
  console.log(curveTable([...points, { operations: 2 * CHURN, ...settled }]));
  console.log(`\nchurn ${(churnMs / 1000).toFixed(1)} s; settled (last row) ${(settledMs / 1000).toFixed(1)} s later`);
}

async function sqliteCurve(): Promise<void> {
  const dataDir = join(dir, "churn-sqlite");
  mkdirSync(dataDir);
  const store = await openSqliteStore({ path: join(dataDir, "platform.db") });
  const running = await quickHousekeeping({ storage: store, dataDir });
  try {
    await curve({
      name: "SQLite",
      store,
      writer: storeWriter(store),
      size: () => store.stats!(),
      shape: { waves: 10, concurrency: 4, batch: 250 },
      settled: (s) => s.sizeBytes === s.inUseBytes,
    });
  } finally {
    await running.stop();
    await store.close();
  }
}

async function etcdCurve(): Promise<void> {
  const cluster = await startEtcdCluster({ members: 3 });
  const dataDir = join(dir, "churn-etcd");
  mkdirSync(dataDir);
  const store = await openEtcdStore({ endpoints: cluster.endpoints, prefix: "/bench", requestTimeoutMs: 20_000 });
  const running = await quickHousekeeping({ storage: store, etcd: { store, endpoints: cluster.endpoints }, dataDir });
  const maintenance = new EtcdMaintenance({ endpoints: cluster.endpoints });
  try {
    await curve({
      name: "etcd (3 members)",
      store,
      writer: etcdTransactionWriter(store),
      size: async () => {
        const stats = await maintenance.stats({ revision: 0, compactedRevision: 0 });
        return { sizeBytes: stats.sizeBytes, inUseBytes: stats.inUseBytes };
      },
      shape: { waves: 5, concurrency: 8, batch: 100 },
      // Every member defragmented: less than the policy's quarter free.
      settled: (s) => s.sizeBytes - s.inUseBytes < s.sizeBytes / 4,
    });
    console.log(`defragmentations: ${running.housekeeping.defragRuns.length} (one member at a time)`);
  } finally {
    await maintenance.close();
    await running.stop();
    await store.close();
    await cluster.stop();
  }
}

async function httpChurn(): Promise<void> {
  const platform = await startPlatformProcess({
    extraArgs: ["--store-compaction-interval", "10s", "--store-compaction-retention", "10s"],
  });
  const api = new ApiClient(platform.url, platform.adminKey, platform.caPem, 16);
  const size = async () => (await readStoreInfo({ dataDir: platform.dataDir })).info.stats!;
  const row = (label: string, stats: { sizeBytes: number; inUseBytes: number }) =>
    console.log(`| ${label} | ${formatBytes(stats.sizeBytes)} | ${formatBytes(stats.inUseBytes)} |`);
  try {
    const before = await readUntil(size, (s) => s.walBytes === 0, 30_000);
    console.log(`\n## ${USERS.toLocaleString("en")} users created and deleted over HTTPS (load ${load()})\n`);
    console.log("| when | size on disk | in use |\n|---|---|---|");
    row("before", before);
    const started = performance.now();
    const each = async (call: (i: number) => Promise<number>, expected: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < USERS) {
            const i = next++;
            const status = await call(i);
            if (status !== expected) throw new Error(`user ${i}: HTTP ${status}`);
          }
        }),
      );
    };
    const user = (name: string) => ({ apiVersion: GROUP_VERSION, kind: "User", metadata: { name }, spec: {} });
    await each(async (i) => (await api.request("POST", USERS_PATH, user(`churn-${i}`))).status, 201);
    row(`after the creates (${((performance.now() - started) / 1000).toFixed(0)} s)`, await size());
    await each(async (i) => (await api.request("DELETE", `${USERS_PATH}/churn-${i}`)).status, 200);
    const deleted = performance.now();
    row(`after the deletes (${((deleted - started) / 1000).toFixed(0)} s)`, await size());
    for (let waited = 2; waited <= 60; waited += 2) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const stats = await size();
      row(`${waited} s after the deletes`, stats);
      if (stats.sizeBytes <= before.sizeBytes * 1.5 && stats.walBytes === 0) break;
    }
  } finally {
    api.close();
    await platform.stop();
  }
}

try {
  console.log(`# bench/store-compaction.ts (load average at start: ${load()})`);
  if (ROUNDS > 0) await latencyComparison();
  if (CHURN > 0) await sqliteCurve();
  if (CHURN > 0 && !values["no-etcd"] && etcdBinary()) await etcdCurve();
  if (USERS > 0) await httpChurn();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
