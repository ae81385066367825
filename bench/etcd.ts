// The etcd backend (issue 18), in one run on a 3-member etcd (Debian's etcd-server, loopback, temporary data):
//  1. durable creates/s through the platform (one replica, HTTPS POST) against raw etcd create transactions (the
//     same compare-put-else-range the store sends, storing the same bytes the platform stores for a bench user) from
//     the same gateway client, in interleaved A/B rounds (the ratio of each pair, and of the best rounds), with the
//     CPU time all the run's processes spend per create, and the etcd calls and request bytes each costs (the
//     members' /metrics): numbers a busy machine blurs less than rates;
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
import { cpuTimeMs } from "./lib/proc.ts";
import { formatMs, formatRatio, summarize } from "./lib/stats.ts";
import { runWatchLoad } from "./lib/watch-load.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
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

/** HTTPS creates/s over `targets` (connections split between them), for DURATION seconds, and how many were made. */
async function platformCreates(targets: PlatformProcess[], token: string): Promise<{ rate: number; count: number }> {
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
  return {
    rate: results.reduce((sum, result) => sum + result.rate, 0),
    count: results.reduce((sum, result) => sum + result.ok, 0),
  };
}

/**
 * What the members did so far: unary calls by method, the bytes of the requests (the gateway's gRPC), and WAL
 * fsyncs (fewer per write when more writes are in flight: etcd commits them together).
 */
async function etcdServed(): Promise<Map<string, number>> {
  const served = new Map<string, number>();
  const add = (name: string, value: number) => served.set(name, (served.get(name) ?? 0) + value);
  for (const endpoint of cluster.endpoints) {
    const text = await (await fetch(new URL("/metrics", endpoint))).text();
    for (const line of text.split("\n")) {
      const value = Number(line.slice(line.lastIndexOf(" ") + 1));
      const call = /^grpc_server_handled_total\{.*grpc_method="(\w+)".*grpc_type="unary"/.exec(line);
      if (call) add(call[1], value);
      else if (line.startsWith("etcd_network_client_grpc_received_bytes_total")) add("bytes", value);
      else if (line.startsWith("etcd_disk_wal_fsync_duration_seconds_count")) add("fsyncs", value);
    }
  }
  return served;
}

/** CPU time (ms) used so far by every process of the run: the members, the platforms and this one (the client). */
function runCpuMs(): number {
  let total = 0;
  for (const pid of [...cluster.members.map((m) => m.pid), ...running.map((p) => p.child.pid)]) {
    if (pid === undefined) continue;
    try {
      total += cpuTimeMs(pid);
    } catch {
      // exited (the failover part kills one)
    }
  }
  const self = process.cpuUsage();
  return total + (self.user + self.system) / 1000;
}

/**
 * etcd's work per operation of `run` ("Txn 1.00, Range 0.03; 960 B; 0.45 fsyncs", summed over the members), and
 * the CPU time the run's processes spent per operation.
 */
async function perOperation(run: () => Promise<{ rate: number; count: number }>) {
  const before = await etcdServed();
  const cpuBefore = runCpuMs();
  const { rate, count } = await run();
  const cpu = runCpuMs() - cpuBefore;
  const after = await etcdServed();
  const n = Math.max(1, count);
  const per = (name: string) => ((after.get(name) ?? 0) - (before.get(name) ?? 0)) / n;
  const calls = [...after.keys()]
    .filter((name) => name !== "bytes" && name !== "fsyncs" && per(name) >= 0.005)
    .map((name) => `${name} ${per(name).toFixed(2)}`);
  const served = `${calls.join(", ")}; ${per("bytes").toFixed(0)} B; ${per("fsyncs").toFixed(2)} fsyncs`;
  return { rate, cpuMs: cpu / n, served };
}

/**
 * What the platform stores for a bench user (base64, as etcd holds it): the request body plus the server's uid,
 * timestamps and managedFields. Raw transactions store these bytes, so both sides write the same.
 */
async function storedUser(target: PlatformProcess, prefix: string): Promise<string> {
  const api = new ApiClient(target.url, target.adminKey, target.caPem);
  await api.request("POST", USERS_PATH, benchUser({ name: "raw-template" }));
  api.close();
  const answer = await client.call<{ kvs?: { value: string }[] }>("/v3/kv/range", {
    key: toBase64(new EtcdKeyspace(prefix).key("/management.platform.sh/users//raw-template")),
  });
  const value = answer.kvs?.[0]?.value;
  if (!value) throw new Error(`no stored user raw-template under ${prefix}: has the registry's key layout changed?`);
  return value;
}

/** Raw create transactions/s through the store's gateway client, CONNECTIONS callers, DURATION seconds. */
async function rawCreates(value: string, round: number): Promise<{ rate: number; count: number }> {
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
  return { rate: (done / (performance.now() - start)) * 1000, count: done };
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
  const value = await storedUser(one, "/bench-one");
  const raw: number[] = [];
  const through: number[] = [];
  const pairs: number[] = [];
  const rawCpu: number[] = [];
  const throughCpu: number[] = [];
  let rawServed = "";
  let throughServed = "";
  for (let round = 0; round < ROUNDS; round++) {
    step(`creates, round ${round + 1}`);
    const direct = await perOperation(() => rawCreates(value, round));
    raw.push(direct.rate);
    rawCpu.push(direct.cpuMs);
    rawServed = direct.served;
    const platform = await perOperation(() => platformCreates([one], one.adminKey));
    through.push(platform.rate);
    throughCpu.push(platform.cpuMs);
    pairs.push(platform.rate / direct.rate);
    throughServed = platform.served;
  }
  const best = (xs: number[]) => Math.max(...xs);
  rows.push(["raw etcd create txns/s (best round)", best(raw).toFixed(0), ""]);
  rows.push([
    "platform creates/s on etcd (best round)",
    best(through).toFixed(0),
    formatRatio(best(through) / best(raw)),
  ]);
  rows.push([
    "platform / raw creates, each round (median)",
    pairs.map((r) => r.toFixed(2)).join(" "),
    formatRatio(summarize(pairs).p50),
  ]);
  // On a busy machine the rates follow the neighbours' load; CPU time per create much less so, and on a machine
  // the run has to itself (CPU-bound, as 3 members and a platform on 2 cores are) its ratio is the rate's.
  const cpuRaw = summarize(rawCpu).p50;
  const cpuThrough = summarize(throughCpu).p50;
  rows.push([
    "CPU ms per create, all processes, raw / platform (median)",
    `${cpuRaw.toFixed(2)} / ${cpuThrough.toFixed(2)}`,
    formatRatio(cpuRaw / cpuThrough),
  ]);
  rows.push(["etcd calls; request bytes; fsyncs per raw create (last round)", rawServed, ""]);
  rows.push(["etcd calls; request bytes; fsyncs per platform create (last round)", throughServed, ""]);
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
      (await platformCreates(targets, one.adminKey)).rate.toFixed(0),
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
