// Syncer benchmark (issue 7). Run: node bench/syncer.ts [--objects 1000] [--updates 100] [--idle-seconds 10]
//   [--workers 4] [--json]
//
// Method: two cluster API servers (virtual and host) run as child processes; the syncer runs in this process with a
// typical endpoints patch set (three expression patches, one of them a wildcard over addresses). A watch on the
// host's namespace time-stamps when each object appears or changes there.
//   1. baseline: the same N Endpoints created directly on the host (4 concurrent writers), latency = write start to
//      the host watch event; then U sequential updates, one at a time.
//   2. syncer burst: N Endpoints created in the virtual cluster (4 concurrent writers, their Services created
//      beforehand), latency = virtual write start to the host watch event of the translated object; objects synced
//      per second = N / (last host event - first write start).
//   3. syncer sequential: U updates one at a time, each waited for on the host (unloaded latency).
//   4. idle: host writes counted by the syncer and CPU of this process and both servers over an idle period, with
//      the same idle measurement taken before the syncer started as the baseline.
// Both servers are warmed up first; the benchmark's writers use pooled connections like the syncer's. Ratios are
// syncer / baseline from the same run. The machine is shared: read the numbers as orders of magnitude.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { KubeConfig, type V1Endpoints, Watch } from "@kubernetes/client-node";
import { loadKubeAccess } from "../src/virtualcluster/kube/kube-access.ts";
import { loadSettings } from "../src/virtualcluster/settings/load.ts";
import { startSyncer } from "../src/virtualcluster/syncer/syncer.ts";
import { createKubeClient } from "../test/support/pooled-kube-client.ts";
import { cpuTimeMs } from "./lib/proc.ts";
import { round, summarize } from "./lib/stats.ts";

const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};

if (process.argv[2] === "--serve") {
  // Child role: one cluster API server in the given data directory; prints its kubeconfig path when ready.
  const { startClusterApiServer } = await import("../src/cluster-apiserver/cluster-api-server.ts");
  const server = await startClusterApiServer({ dataDir: process.argv[3], host: "127.0.0.1", port: 0, name: "bench" });
  process.stdout.write(`${JSON.stringify({ kubeconfigPath: server.kubeconfigPath })}\n`);
  process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
} else {
  await main();
}

async function main(): Promise<void> {
  const OBJECTS = argument("--objects", 1000);
  const UPDATES = argument("--updates", 100);
  const IDLE_SECONDS = argument("--idle-seconds", 10);
  const CONCURRENCY = 4;
  const WARMUP = 300;
  const WORKERS = argument("--workers", 4);
  const VC = "bench";
  const HOST_NS = "bench-host";
  const json = process.argv.includes("--json");

  const dirs = [await mkdtemp(join(tmpdir(), "bench-syncer-v-")), await mkdtemp(join(tmpdir(), "bench-syncer-h-"))];
  const [virtualChild, hostChild] = await Promise.all(dirs.map(serve));
  // Children die with this process, whatever happens.
  process.once("exit", () => {
    for (const child of [virtualChild, hostChild]) child.process.kill("SIGKILL");
  });
  const virtualConfig = kubeConfig(virtualChild.kubeconfigPath);
  const hostConfig = kubeConfig(hostChild.kubeconfigPath);
  // The benchmark's own writers share one connection pool per server, as the syncer's do.
  const virtualClient = createKubeClient(virtualConfig);
  const hostClient = createKubeClient(hostConfig);
  const virtual = virtualClient.core;
  const host = hostClient.core;
  await host.createNamespace({ body: { metadata: { name: HOST_NS } } });

  // Host observer: first time each (name, ip) shows up in the host namespace.
  const seen = new Map<string, number>();
  const watch = await new Watch(hostConfig).watch(
    `/api/v1/namespaces/${HOST_NS}/endpoints`,
    {},
    (_type, object: V1Endpoints) => {
      const key = `${object.metadata?.name}|${object.subsets?.[0]?.addresses?.[0]?.ip}`;
      if (!seen.has(key)) seen.set(key, performance.now());
    },
    () => {},
  );
  const arrival = (name: string, ip: string) => `${name}|${ip}`;
  const waitFor = async (keys: string[]) => {
    const deadline = performance.now() + 120_000;
    while (keys.some((key) => !seen.has(key))) {
      if (performance.now() > deadline)
        throw new Error(`timed out; ${keys.filter((k) => !seen.has(k)).length} missing`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };

  const endpoints = (name: string, namespace: string, ip: string): V1Endpoints => ({
    metadata: { name, namespace, labels: { app: name }, annotations: { "example.com/build": "1" } },
    subsets: [
      {
        addresses: [
          { ip, hostname: "pod-a" },
          { ip: "10.9.9.9", hostname: "pod-b" },
        ],
        ports: [{ name: "http", port: 80 }],
      },
    ],
  });
  const ipOf = (i: number, round = 1) => `10.${round}.${Math.floor(i / 250)}.${i % 250}`;

  /** Runs `task(i)` for i < count with `CONCURRENCY` in flight; returns the start time of each. */
  const burst = async (count: number, task: (i: number) => Promise<unknown>) => {
    const started = new Float64Array(count);
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          const i = next++;
          started[i] = performance.now();
          await task(i);
        }
      }),
    );
    return started;
  };
  const measure = (started: Float64Array, keys: string[]) => {
    const latencies = keys.map((key, i) => seen.get(key)! - started[i]);
    const span = Math.max(...keys.map((key) => seen.get(key)!)) - Math.min(...started);
    return { latency: summarize(latencies), perSecond: round((keys.length * 1000) / span, 1) };
  };
  const sequential = async (count: number, update: (i: number) => Promise<string>) => {
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      const key = await update(i);
      await waitFor([key]);
      latencies.push(seen.get(key)! - start);
    }
    return summarize(latencies);
  };
  const idle = async () => {
    const cpu = () => ({
      self: process.cpuUsage(),
      virtual: cpuTimeMs(virtualChild.pid),
      host: cpuTimeMs(hostChild.pid),
    });
    const before = cpu();
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const seconds = (performance.now() - started) / 1000;
    const after = cpu();
    const own = process.cpuUsage(before.self);
    return {
      selfCpuMsPerSecond: round((own.user + own.system) / 1000 / seconds),
      virtualServerCpuMsPerSecond: round((after.virtual - before.virtual) / seconds),
      hostServerCpuMsPerSecond: round((after.host - before.host) / seconds),
    };
  };

  // 0. Warm-up of both servers (JIT, SQLite pages), not measured: Endpoints without a Service are never synced.
  progress("warm-up");
  await burst(WARMUP, (i) =>
    host.createNamespacedEndpoints({ namespace: "default", body: endpoints(`warm-${i}`, "default", ipOf(i)) }),
  );
  await burst(WARMUP, (i) =>
    virtual.createNamespacedEndpoints({
      namespace: "kube-public",
      body: endpoints(`warm-${i}`, "kube-public", ipOf(i)),
    }),
  );

  // 1. Baseline: direct writes on the host.
  progress("baseline: burst of creates");
  const baseNames = Array.from({ length: OBJECTS }, (_, i) => `base-${i}`);
  const baseStarted = await burst(OBJECTS, (i) =>
    host.createNamespacedEndpoints({ namespace: HOST_NS, body: endpoints(baseNames[i], HOST_NS, ipOf(i)) }),
  );
  await waitFor(baseNames.map((name, i) => arrival(name, ipOf(i))));
  const baseline = measure(
    baseStarted,
    baseNames.map((name, i) => arrival(name, ipOf(i))),
  );
  const newIp = (i: number) => [{ op: "replace", path: "/subsets/0/addresses/0/ip", value: ipOf(i, 2) }];
  progress("baseline: sequential updates");
  const baselineSequential = await sequential(UPDATES, async (i) => {
    await host.patchNamespacedEndpoints({ namespace: HOST_NS, name: baseNames[i], body: newIp(i) });
    return arrival(baseNames[i], ipOf(i, 2));
  });
  progress("baseline: idle");
  const idleBaseline = await idle();

  // 2. The syncer.
  const settings = await loadSettings(
    `
sync:
  toHost:
    services:
      enabled: false
    endpoints:
      patches:
        - path: metadata.labels.app
          expression: value.toUpperCase()
          reverseExpression: value.toLowerCase()
        - path: metadata.annotations["example.com/owner"]
          expression: "valueExists ? value : context.vcluster.name"
        - path: subsets[*].addresses[*].hostname
          expression: "value ? value + '-' + context.vcluster.name : value"
`,
    { namespace: HOST_NS },
  );
  const names = Array.from({ length: OBJECTS }, (_, i) => `svc-${i}`);
  await burst(OBJECTS, (i) =>
    virtual.createNamespacedService({
      namespace: "default",
      body: { metadata: { name: names[i] }, spec: { ports: [{ port: 80 }] } },
    }),
  );
  progress("syncer: burst of creates");
  const syncer = await startSyncer({
    virtual: await loadKubeAccess({ file: virtualChild.kubeconfigPath }),
    host: await loadKubeAccess({ file: hostChild.kubeconfigPath }),
    name: VC,
    hostNamespace: HOST_NS,
    settings,
    workers: WORKERS,
  });
  await syncer.synced();
  const hostName = (name: string) => `${name}-x-default-x-${VC}`;
  const syncStarted = await burst(OBJECTS, (i) =>
    virtual.createNamespacedEndpoints({ namespace: "default", body: endpoints(names[i], "default", ipOf(i)) }),
  );
  const syncKeys = names.map((name, i) => arrival(hostName(name), ipOf(i)));
  await waitFor(syncKeys);
  const synced = measure(syncStarted, syncKeys);
  progress("syncer: sequential updates");
  const syncSequential = await sequential(UPDATES, async (i) => {
    await virtual.patchNamespacedEndpoints({ namespace: "default", name: names[i], body: newIp(i) });
    return arrival(hostName(names[i]), ipOf(i, 2));
  });
  while (syncer.stats().queueDepth > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  const writesBefore = syncer.stats().totalWrites;
  progress("syncer: idle");
  const idleSyncer = await idle();
  const stats = syncer.stats();

  const result = {
    objects: OBJECTS,
    updates: UPDATES,
    concurrency: CONCURRENCY,
    workers: WORKERS,
    createBurst: {
      baseline: baseline,
      syncer: synced,
      latencyRatioP50: round(synced.latency.p50 / baseline.latency.p50),
      latencyRatioP99: round(synced.latency.p99 / baseline.latency.p99),
      throughputRatio: round(synced.perSecond / baseline.perSecond),
    },
    sequentialUpdate: {
      baseline: baselineSequential,
      syncer: syncSequential,
      latencyRatioP50: round(syncSequential.p50 / baselineSequential.p50),
      latencyRatioP99: round(syncSequential.p99 / baselineSequential.p99),
    },
    idle: {
      seconds: IDLE_SECONDS,
      writes: stats.totalWrites - writesBefore,
      baseline: idleBaseline,
      syncer: idleSyncer,
    },
    syncerWrites: stats.writes,
    syncerErrors: stats.errors,
  };
  if (json) console.log(JSON.stringify(result, null, 2));
  else printReport(result);

  watch.abort();
  await syncer.close();
  await Promise.all([virtualClient.close(), hostClient.close()]);
  settings.dispose();
  for (const child of [virtualChild, hostChild]) child.process.kill("SIGTERM");
  await Promise.all(
    [virtualChild, hostChild].map((child) => new Promise((resolve) => child.process.once("exit", resolve))),
  );
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
}

function progress(phase: string): void {
  process.stderr.write(`[bench/syncer] ${phase}\n`);
}

function kubeConfig(path: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(path);
  return config;
}

async function serve(dataDir: string): Promise<{ process: ChildProcess; pid: number; kubeconfigPath: string }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", dataDir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { process: child, pid: child.pid!, kubeconfigPath: JSON.parse(line).kubeconfigPath };
}

// biome-ignore lint/suspicious/noExplicitAny: report printing of a plain result object
function printReport(r: any): void {
  const lat = (s: { p50: number; p99: number }) => `p50 ${round(s.p50)} ms, p99 ${round(s.p99)} ms`;
  console.log(
    `Syncer benchmark: ${r.objects} Endpoints with patches, ${r.concurrency} concurrent writers, ${r.workers} syncer workers`,
  );
  console.log("create burst (write start -> host watch event)");
  console.log(
    `  baseline (direct host create): ${lat(r.createBurst.baseline.latency)}, ${r.createBurst.baseline.perSecond} objects/s`,
  );
  console.log(
    `  syncer (virtual create):       ${lat(r.createBurst.syncer.latency)}, ${r.createBurst.syncer.perSecond} objects/s`,
  );
  console.log(
    `  ratios: p50 x${r.createBurst.latencyRatioP50}, p99 x${r.createBurst.latencyRatioP99}, throughput x${r.createBurst.throughputRatio}`,
  );
  console.log(`sequential updates (${r.updates}, one at a time)`);
  console.log(`  baseline: ${lat(r.sequentialUpdate.baseline)}; syncer: ${lat(r.sequentialUpdate.syncer)}`);
  console.log(`  ratios: p50 x${r.sequentialUpdate.latencyRatioP50}, p99 x${r.sequentialUpdate.latencyRatioP99}`);
  console.log(`idle ${r.idle.seconds} s: syncer writes ${r.idle.writes}`);
  console.log(`  CPU ms/s before the syncer: ${JSON.stringify(r.idle.baseline)}`);
  console.log(`  CPU ms/s with the syncer:   ${JSON.stringify(r.idle.syncer)}`);
  console.log(`syncer writes: ${JSON.stringify(r.syncerWrites)}, errors ${r.syncerErrors}`);
}
