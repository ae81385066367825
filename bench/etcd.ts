// The etcd backend (issue 18), in one run on a 3-member etcd (Debian's etcd-server, loopback, temporary data):
//  1. durable creates/s through the platform (one replica, HTTPS POST) against raw etcd create transactions (the
//     same compare-put-else-range the store sends) from the same gateway client, in interleaved A/B rounds;
//  2. GET p99 and watch p99 (1,000 watchers, the issue-2 watch load) on etcd against SQLite, same run;
//  3. leader failover: SIGKILL the replica holding the controllers' lease, time until another holds it;
//  4. creates/s with 1, 2 and 3 replicas (the connections split over the replicas).
//
//   node bench/etcd.ts [--duration seconds] [--rounds n] [--connections n] [--watchers n]

import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { EtcdClient, fromBase64, toBase64 } from "../src/storage/etcd/etcd-client.ts";
import { EtcdKeyspace } from "../src/storage/etcd/etcd-keyspace.ts";
import { startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { type PlatformProcess, startPlatformProcess } from "../test/support/platform-process.ts";
import { ApiClient, benchUser, USERS_PATH } from "./lib/api.ts";
import { load } from "./lib/load.ts";
import { formatMs, formatRatio } from "./lib/stats.ts";
import { runWatchLoad } from "./lib/watch-load.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "2" },
    connections: { type: "string", default: "32" },
    watchers: { type: "string", default: "1000" },
  },
});
const DURATION = Number(values.duration);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const WATCHERS = Number(values.watchers);
const step = (what: string) => process.stderr.write(`${new Date().toISOString()} ${what}\n`);

const cluster = await startEtcdCluster({ members: 3 });
const root = await mkdtemp(join(tmpdir(), "bench-etcd-"));
const keyFile = join(root, "encryption.key");
await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
const running: PlatformProcess[] = [];

async function replica(name: string, prefix: string): Promise<PlatformProcess> {
  const dataDir = join(root, name);
  await mkdir(dataDir, { mode: 0o700 });
  const args = ["--store", "etcd", "--etcd-endpoints", cluster.endpoints.join(","), "--etcd-prefix", prefix];
  const started = await startPlatformProcess({ dataDir, extraArgs: [...args, "--encryption-key-file", keyFile] });
  running.push(started);
  return started;
}

async function sqlite(name: string): Promise<PlatformProcess> {
  const dataDir = join(root, name);
  await mkdir(dataDir, { mode: 0o700 });
  const started = await startPlatformProcess({ dataDir });
  running.push(started);
  return started;
}

/** HTTPS creates/s over `targets` (connections split between them), for DURATION seconds. */
async function platformCreates(targets: PlatformProcess[], token: string): Promise<number> {
  const each = Math.max(1, Math.floor(CONNECTIONS / targets.length));
  const results = await Promise.all(
    targets.map((target) =>
      load({
        url: target.url,
        token,
        method: "POST",
        path: USERS_PATH,
        body: JSON.stringify(benchUser({ generateName: "bench-" })),
        connections: each,
        duration: DURATION,
      }),
    ),
  );
  return results.reduce((sum, result) => sum + result.rate, 0);
}

/** Raw create transactions/s through the store's gateway client, CONNECTIONS callers, DURATION seconds. */
async function rawCreates(client: EtcdClient, round: number): Promise<number> {
  const value = toBase64(JSON.stringify(benchUser({ name: "raw" })));
  const deadline = performance.now() + DURATION * 1000;
  let done = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, caller) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const key = toBase64(`/bench-raw/${round}/${caller}/${i}`);
        await client.call("/v3/kv/txn", {
          compare: [{ key, target: "CREATE", result: "EQUAL", create_revision: "0" }],
          success: [{ request_put: { key, value } }],
          failure: [{ request_range: { key } }],
        });
        done++;
      }
    }),
  );
  return (done / (performance.now() - start)) * 1000;
}

async function getP99(target: PlatformProcess, token: string): Promise<number> {
  const api = new ApiClient(target.url, token, target.caPem);
  await api.request("POST", USERS_PATH, benchUser({ name: "get-me" }));
  api.close();
  const result = await load({
    url: target.url,
    token,
    path: `${USERS_PATH}/get-me`,
    connections: CONNECTIONS,
    duration: DURATION,
  });
  return result.latency.p99;
}

async function watchP99(target: PlatformProcess, token: string): Promise<number> {
  const api = new ApiClient(target.url, token, target.caPem);
  await api.request("POST", USERS_PATH, benchUser({ name: "watched" }));
  const list = await api.request("GET", USERS_PATH);
  api.close();
  const result = await runWatchLoad({
    url: target.url,
    token,
    ca: target.caPem,
    user: "watched",
    listRevision: JSON.parse(list.body).metadata.resourceVersion,
    watchers: WATCHERS,
    updates: 100,
    rate: 20,
  });
  return result.latency.p99;
}

async function leaderRecord(client: EtcdClient, prefix: string): Promise<string | undefined> {
  const answer = await client.call<{ kvs?: { value: string }[] }>("/v3/kv/range", {
    key: toBase64(new EtcdKeyspace(prefix).leader("controllers")),
  });
  return answer.kvs?.[0] ? fromBase64(answer.kvs[0].value) : undefined;
}

const rows: string[][] = [];
const client = new EtcdClient({ endpoints: cluster.endpoints });
try {
  // 1 and 2: one etcd replica and one SQLite platform, measured in the same run.
  step("starting a replica on etcd and a platform on SQLite");
  const one = await replica("one", "/bench-one");
  const embedded = await sqlite("embedded");
  const raw: number[] = [];
  const through: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    step(`creates, round ${round + 1}`);
    raw.push(await rawCreates(client, round));
    through.push(await platformCreates([one], one.adminKey));
  }
  const best = (xs: number[]) => Math.max(...xs);
  rows.push(["raw etcd create txns/s (best round)", best(raw).toFixed(0), ""]);
  rows.push([
    "platform creates/s on etcd (best round)",
    best(through).toFixed(0),
    formatRatio(best(through) / best(raw)),
  ]);
  step("GET");
  const getEtcd = await getP99(one, one.adminKey);
  const getSqlite = await getP99(embedded, embedded.adminKey);
  rows.push([
    "GET p99 ms, etcd / SQLite",
    `${formatMs(getEtcd)} / ${formatMs(getSqlite)}`,
    formatRatio(getEtcd / getSqlite),
  ]);
  step("watch");
  const watchEtcd = await watchP99(one, one.adminKey);
  const watchSqlite = await watchP99(embedded, embedded.adminKey);
  rows.push([
    `watch p99 ms (${WATCHERS} watchers), etcd / SQLite`,
    `${formatMs(watchEtcd)} / ${formatMs(watchSqlite)}`,
    formatRatio(watchEtcd / watchSqlite),
  ]);

  // 4: creates/s with 1, 2 and 3 replicas on one prefix.
  step("replicas");
  const two = await replica("two", "/bench-one");
  const three = await replica("three", "/bench-one");
  for (const targets of [[one], [one, two], [one, two, three]]) {
    rows.push([
      `creates/s with ${targets.length} replica(s)`,
      (await platformCreates(targets, one.adminKey)).toFixed(0),
      "",
    ]);
  }

  // 3: failover: kill the leader, time until another replica holds the lease.
  step("failover");
  const holder = await leaderRecord(client, "/bench-one");
  step(`leader: ${holder}; replicas: ${[one, two, three].map((r) => r.child.pid).join(", ")}`);
  const leader = [one, two, three].find((r) => holder?.endsWith(`/${r.child.pid}`));
  if (leader) {
    const killedAt = performance.now();
    leader.child.kill("SIGKILL");
    let moved = false;
    while (!moved && performance.now() - killedAt < 60_000) {
      const now = await leaderRecord(client, "/bench-one");
      moved = now !== undefined && now !== holder;
      if (!moved) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const took = moved ? formatMs(performance.now() - killedAt) : "no new leader in 60 s";
    rows.push(["leader failover (SIGKILL to a new lease holder), ms", took, ""]);
  }
} finally {
  for (const platform of running) {
    if (platform.child.exitCode === null && platform.child.signalCode === null) await platform.stop().catch(() => {});
  }
  await client.close();
  await cluster.stop();
  await rm(root, { recursive: true, force: true });
}
const width = Math.max(...rows.map((row) => row[0].length));
for (const [label, value, ratio] of rows) console.log(`${label.padEnd(width)}  ${value.padStart(18)}  ${ratio}`);
