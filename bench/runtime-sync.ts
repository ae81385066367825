// Runtime sync benchmark (issue 21). Run: node bench/runtime-sync.ts [--objects 4000] [--burst 800] [--rate 50]
//   [--paced-seconds 10] [--rounds 2] [--warmup 200] [--quiet-seconds 25] [--from dist]
//   [--runtime-node-options "<node flags for the runtime, e.g. --cpu-prof>"] [--host-node-options "<for the host>"]
//
// Method: a host cluster API server (`virtualcluster apiserver`) and a virtual cluster (`virtualcluster run`, its
// own API server + syncer, Endpoints patches on) as child processes over HTTPS; a watch on the host namespace
// time-stamps each object's arrival. Interleaved A/B rounds:
//   A (baseline) = the same Endpoints written directly on the host by 4 writers;
//   B (syncer)   = written in the virtual cluster by 4 writers, latency to the host watch event.
// The bursts also run A with the same selector-less Services created on the host first ("directServices"), as the
// syncer run has them on both sides: the host then mirrors each Endpoints into an EndpointSlice as the virtual
// cluster does for its own, so the runtime's CPU per object is compared with the host's for the same object doing
// the same work (cpuRatio), and with the bare create as well (cpuRatioBare).
// Per round: a burst of --burst creates (throughput = objects / span, p99 latency), then a paced run at --rate
// objects/s for --paced-seconds (p99 latency). Before a syncer run, the virtual Services its Endpoints need are
// created and their sync (host Service, cluster IP shown back) is waited out, so it is not part of the measure.
// The syncer bursts also report what the sync cost per object besides CPU (perObject): the host's API requests by
// verb and resource (its /metrics) and the syncs of a key (the runtime's virtualcluster_syncer_syncs_total).
// Memory: the runtime's resident set idle after start-up (synced, then 5 s quiet), and with --objects Endpoints (with their Services)
// synced: 3 s after the last arrived, and once the syncer is done and the runtime was quiet for --quiet-seconds;
// the host API server's own RSS holding the same objects is printed beside it as the baseline. The machine is
// shared: read numbers as orders of magnitude.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig, type V1Endpoints, Watch } from "@kubernetes/client-node";
import { createKubeClient } from "../test/support/pooled-kube-client.ts";
import { cpuTimeMs, memoryStatus } from "./lib/proc.ts";
import { round, summarize } from "./lib/stats.ts";

// As users start it: bin/virtualcluster.js (in a checkout it runs the TypeScript sources), or with --from dist the
// JavaScript an installed copy runs (`npm run build` first), with Node's compile cache on as bin/virtualcluster.js
// turns it on for an installed copy.
const FROM_DIST = process.argv.includes("--from") && process.argv[process.argv.indexOf("--from") + 1] === "dist";
const MAIN = new URL(FROM_DIST ? "../dist/cli/main.js" : "../bin/virtualcluster.js", import.meta.url).pathname;
const COMPILE_CACHE = FROM_DIST ? { NODE_COMPILE_CACHE: join(tmpdir(), "node-compile-cache") } : {};
const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const OBJECTS = argument("--objects", 4000);
const BURST = argument("--burst", 800);
const RATE = argument("--rate", 50);
const PACED_SECONDS = argument("--paced-seconds", 10);
const ROUNDS = argument("--rounds", 2);
const WARMUP = argument("--warmup", 200);
const QUIET_SECONDS = argument("--quiet-seconds", 25);
const WRITERS = 4;
const VC = "bench";
const HOST_NS = "bench-host";
const SETTINGS = `
sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.labels.app
          expression: value.toUpperCase()
          reverseExpression: value.toLowerCase()
        - path: metadata.annotations["example.com/owner"]
          expression: "valueExists ? value : context.vcluster.name"
        - path: subsets[*].addresses[*].hostname
          expression: "value ? value + '-' + context.vcluster.name : value"
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const progress = (phase: string) => process.stderr.write(`[bench/runtime-sync] ${phase}\n`);
const mib = (kib: number) => round(kib / 1024, 1);

const optionText = (name: string) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
/** Node options for the runtime process only (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). */
const RUNTIME_NODE_OPTIONS = optionText("--runtime-node-options")?.split(/\s+/).filter(Boolean) ?? [];
/** Node options for the host API server only. */
const HOST_NODE_OPTIONS = optionText("--host-node-options")?.split(/\s+/).filter(Boolean) ?? [];

function start(
  args: string[],
  ready: RegExp,
  nodeOptions: string[] = [],
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [...nodeOptions, MAIN, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...COMPILE_CACHE, LOG_LEVEL: "warn", LICENSE: undefined },
  });
  process.once("exit", () => child.kill("SIGKILL"));
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const match = ready.exec(out);
      if (match) resolve({ child, match });
    });
    child.stderr?.resume();
    child.once("exit", (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
}

/** Reads a server's /metrics over one kept-alive connection. */
function metricsOf(config: KubeConfig): { read(): Promise<string>; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const read = async () => {
    const options: Parameters<typeof request>[1] = { method: "GET", agent };
    await config.applyToHTTPSOptions(options);
    return await new Promise<string>((resolve, reject) => {
      const req = request(`${config.getCurrentCluster()?.server}/metrics`, options, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve(body));
      });
      req.on("error", reject);
      req.end();
    });
  };
  return { read, close: () => agent.destroy() };
}

/** Resource requests served, by "VERB resource[/subresource]", from apiserver_request_total (every code). */
function resourceRequests(metrics: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [, labels, value] of metrics.matchAll(/^apiserver_request_total\{(.*)\} (\S+)$/gm)) {
    const label = (name: string) => new RegExp(`(?:^|,)${name}="([^"]*)"`).exec(labels)?.[1] ?? "";
    if (!label("resource")) continue; // /metrics, /version: the bench's own looks
    const what = `${label("verb")} ${label("resource")}${label("subresource") ? `/${label("subresource")}` : ""}`;
    counts.set(what, (counts.get(what) ?? 0) + Number(value));
  }
  return counts;
}

/** What the sync cost between two looks, per synced object: host requests by kind, and syncs of a key. */
function syncWorkPerObject(
  before: { hostRequests: Map<string, number>; syncs: number },
  after: { hostRequests: Map<string, number>; syncs: number },
  objects: number,
) {
  const hostRequests: Record<string, number> = {};
  for (const [what, count] of after.hostRequests) {
    const added = count - (before.hostRequests.get(what) ?? 0);
    if (added > 0) hostRequests[what] = round(added / objects, 3);
  }
  return { hostRequests, syncs: round((after.syncs - before.syncs) / objects, 3) };
}

function kubeConfig(path: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(path);
  return config;
}

const endpoints = (name: string, namespace: string, ip: string): V1Endpoints => ({
  metadata: { name, namespace, labels: { app: name } },
  subsets: [{ addresses: [{ ip, hostname: "pod-a" }], ports: [{ name: "http", port: 80 }] }],
});
const ipOf = (i: number, round: number) => `10.${round}.${Math.floor(i / 250) % 250}.${i % 250}`;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "bench-runtime-sync-"));
  const hostServer = await start(
    ["apiserver", "--data-dir", join(dir, "host"), "--port", "0"],
    /Admin kubeconfig: (\S+)/,
    HOST_NODE_OPTIONS,
  );
  const hostConfig = kubeConfig(hostServer.match[1]);
  const hostClient = createKubeClient(hostConfig);
  const host = hostClient.core;
  await host.createNamespace({ body: { metadata: { name: HOST_NS } } });
  await writeFile(join(dir, "virtualcluster.yaml"), SETTINGS);
  const runtime = await start(
    [
      "run",
      "--name",
      VC,
      "-n",
      HOST_NS,
      "-f",
      join(dir, "virtualcluster.yaml"),
      "--host-kubeconfig",
      hostServer.match[1],
      "--data-dir",
      join(dir, "vc"),
    ],
    /listening on (https:\/\/\S+)/,
    RUNTIME_NODE_OPTIONS,
  );
  const virtualConfig = kubeConfig(join(dir, "vc", "admin.kubeconfig"));
  const virtualClient = createKubeClient(virtualConfig);
  const virtual = virtualClient.core;
  const virtualMetrics = metricsOf(virtualConfig);
  const hostMetrics = metricsOf(hostConfig);
  /** The syncer's queue depth, from the virtual cluster's /metrics. */
  const queueDepth = async () =>
    Number(/^virtualcluster_syncer_queue_depth (\d+)/m.exec(await virtualMetrics.read())?.[1] ?? Number.NaN);
  /** The API requests the host has served, and the keys the syncer has synced, so far. */
  const syncWork = async () => ({
    hostRequests: resourceRequests(await hostMetrics.read()),
    syncs: Number(/^virtualcluster_syncer_syncs_total (\S+)/m.exec(await virtualMetrics.read())?.[1] ?? Number.NaN),
  });
  /** Waits until the syncer has had nothing queued for three looks in a row (its own follow-up work included). */
  const settled = async () => {
    for (let quiet = 0; quiet < 3; ) {
      await sleep(100);
      quiet = (await queueDepth()) === 0 ? quiet + 1 : 0;
    }
  };

  // Idle: started, its informers synced (nothing queued) and quiet for 5 s.
  await settled();
  await sleep(5000);
  const idleRss = memoryStatus(runtime.child.pid!);

  const seen = new Map<string, number>();
  // The watch resumes from its last event when it ends (client-node's fetch gives up on a body silent for 5 min,
  // as during a long memory run's Service phase), so no arrival is lost.
  let lastVersion: string | undefined;
  let watch: AbortController | undefined;
  let watching = true;
  const startWatch = async (): Promise<void> => {
    watch = await new Watch(hostConfig).watch(
      `/api/v1/namespaces/${HOST_NS}/endpoints`,
      lastVersion ? { resourceVersion: lastVersion } : {},
      (_type, object: V1Endpoints) => {
        lastVersion = object.metadata?.resourceVersion ?? lastVersion;
        const key = `${object.metadata?.name}|${object.subsets?.[0]?.addresses?.[0]?.ip}`;
        if (!seen.has(key)) seen.set(key, performance.now());
      },
      () => restartWatch(),
    );
  };
  const restartWatch = () => {
    if (watching) void sleep(100).then(startWatch).catch(restartWatch);
  };
  await startWatch();
  const waitFor = async (keys: string[]) => {
    const deadline = performance.now() + 300_000;
    while (keys.some((key) => !seen.has(key))) {
      if (performance.now() > deadline)
        throw new Error(`timed out; ${keys.filter((k) => !seen.has(k)).length} missing`);
      await sleep(5);
    }
  };
  /** Creates `count` objects: with `rate`, paced at that many per second; else as fast as WRITERS allow. */
  const write = async (count: number, task: (i: number) => Promise<unknown>, rate?: number) => {
    const started = new Float64Array(count);
    const acked = new Float64Array(count);
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < count) {
          const i = next++;
          if (rate) {
            const due = t0 + (i * 1000) / rate;
            if (due > performance.now()) await sleep(due - performance.now());
          }
          started[i] = performance.now();
          await task(i);
          acked[i] = performance.now();
        }
      }),
    );
    return { started, acked };
  };
  /** CPU time of both server processes so far, to charge a run's work per object (moves less than throughput). */
  const cpuNow = () => ({
    runtime: cpuTimeMs(runtime.child.pid!),
    host: cpuTimeMs(hostServer.child.pid!),
    // The writers and the host watch (client-node) use CPU of the same machine too.
    bench: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
  });
  const measure = async (
    { started, acked }: { started: Float64Array; acked: Float64Array },
    keys: string[],
    cpuBefore: ReturnType<typeof cpuNow>,
  ) => {
    const arrivals = keys.map((key) => seen.get(key)!);
    const span = Math.max(...arrivals) - Math.min(...started);
    const writeSpan = Math.max(...acked) - Math.min(...started);
    await sleep(500); // the runtime's trailing work (host watch events of its own writes) is part of the cost
    const cpu = cpuNow();
    return {
      latency: summarize(arrivals.map((arrival, i) => arrival - started[i])),
      perSecond: round((keys.length * 1000) / span, 1),
      // The writes alone: how fast the API server the writers talk to accepted them (host or virtual).
      writeLatency: summarize(Array.from(acked, (ack, i) => ack - started[i])),
      writesPerSecond: round((keys.length * 1000) / writeSpan, 1),
      cpuMsPerObject: {
        runtime: round((cpu.runtime - cpuBefore.runtime) / keys.length, 3),
        host: round((cpu.host - cpuBefore.host) / keys.length, 3),
        bench: round((cpu.bench - cpuBefore.bench) / keys.length, 3),
      },
    };
  };
  const hostName = (name: string) => `${name}-x-default-x-${VC}`;
  type Side = "direct" | "directServices" | "syncer";
  let serial = 0;
  /** One measured run of `count` objects (rate: paced), direct on the host or through the virtual cluster. */
  const run = async (side: Side, count: number, rate?: number) => {
    const tag = ++serial;
    const names = Array.from({ length: count }, (_, i) => `r${tag}-${i}`);
    if (side === "directServices") {
      await write(count, (i) =>
        host.createNamespacedService({
          namespace: HOST_NS,
          body: { metadata: { name: names[i] }, spec: { ports: [{ port: 80 }] } },
        }),
      );
      await sleep(1000); // the host's own follow-up of the Services (cluster IPs, mirroring's look) is not measured
    }
    if (side === "syncer") {
      await write(count, (i) =>
        virtual.createNamespacedService({
          namespace: "default",
          body: { metadata: { name: names[i] }, spec: { ports: [{ port: 80 }] } },
        }),
      );
      await settled(); // the Services' own sync (host create, cluster IP shown) ends before the measured writes
    }
    const workBefore = side === "syncer" ? await syncWork() : undefined;
    const cpuBefore = cpuNow();
    const times = await write(
      count,
      (i) =>
        side !== "syncer"
          ? host.createNamespacedEndpoints({ namespace: HOST_NS, body: endpoints(names[i], HOST_NS, ipOf(i, tag)) })
          : virtual.createNamespacedEndpoints({
              namespace: "default",
              body: endpoints(names[i], "default", ipOf(i, tag)),
            }),
      rate,
    );
    const keys = names.map((name, i) => `${side !== "syncer" ? name : hostName(name)}|${ipOf(i, tag)}`);
    await waitFor(keys);
    const measured = await measure(times, keys, cpuBefore);
    // Read after the CPU: the looks at /metrics are not charged to the objects.
    if (!workBefore) return measured;
    return { ...measured, perObject: syncWorkPerObject(workBefore, await syncWork(), count) };
  };

  // Both servers' code is compiled and their stores past their first pages before anything is measured: without
  // this the first round's direct burst runs on a cold host and flatters the syncer.
  if (WARMUP > 0) {
    progress(`warm-up: ${WARMUP} objects each way`);
    await run("direct", WARMUP);
    await run("syncer", WARMUP);
  }
  const rounds: { burst: Record<string, unknown>; paced: Record<string, unknown> }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Interleaved A/B: direct then syncer in one round, syncer then direct in the next.
    const order: Side[] = r % 2 === 0 ? ["direct", "syncer"] : ["syncer", "direct"];
    const burstOrder: Side[] =
      r % 2 === 0 ? ["direct", "directServices", "syncer"] : ["syncer", "directServices", "direct"];
    const burst: Record<string, Awaited<ReturnType<typeof measure>>> = {};
    const paced: Record<string, Awaited<ReturnType<typeof measure>>> = {};
    for (const side of burstOrder) {
      progress(`round ${r + 1}: ${side} burst of ${BURST}`);
      burst[side] = await run(side, BURST);
    }
    for (const side of order) {
      progress(`round ${r + 1}: ${side} paced ${RATE}/s for ${PACED_SECONDS} s`);
      paced[side] = await run(side, RATE * PACED_SECONDS, RATE);
    }
    rounds.push({
      burst: {
        ...burst,
        throughputRatio: round(burst.syncer.perSecond / burst.direct.perSecond),
        // Issue 32's goal: the runtime's CPU per synced object against the host's per direct create of the same
        // object (its Service on the host, so mirrored too), and against the bare create (no Service, no mirroring).
        cpuRatio: round(burst.syncer.cpuMsPerObject.runtime / burst.directServices.cpuMsPerObject.host),
        cpuRatioBare: round(burst.syncer.cpuMsPerObject.runtime / burst.direct.cpuMsPerObject.host),
      },
      paced: { ...paced, p99Ratio: round(paced.syncer.latency.p99 / paced.direct.latency.p99) },
    });
  }

  const have = rounds.length * (BURST + RATE * PACED_SECONDS) + Math.max(WARMUP, 0);
  const more = Math.max(0, OBJECTS - have);
  progress(`memory: ${more} more objects to reach ${OBJECTS} synced`);
  if (more > 0) await run("syncer", more);
  // Right after the last object arrived, and once the syncer is done and the runtime has been quiet for a while
  // (it gives its spare heap back 10-20 s after work stops: src/virtualcluster/heap-compactor.ts).
  await sleep(3000);
  const busyRss = memoryStatus(runtime.child.pid!);
  await settled();
  await sleep(QUIET_SECONDS * 1000);
  const loadedRss = memoryStatus(runtime.child.pid!);
  const hostRss = memoryStatus(hostServer.child.pid!);

  const result = {
    rounds,
    memory: {
      runtimeIdleMiB: mib(idleRss.vmRssKiB),
      runtimeWithObjectsMiB: mib(loadedRss.vmRssKiB),
      runtimeWithObjectsJustAfterMiB: mib(busyRss.vmRssKiB),
      runtimePeakMiB: mib(loadedRss.vmHwmKiB),
      objects: OBJECTS,
      hostServerWithObjectsMiB: mib(hostRss.vmRssKiB),
    },
  };
  console.log(JSON.stringify(result, null, 2));

  watching = false;
  watch?.abort();
  virtualMetrics.close();
  hostMetrics.close();
  await Promise.all([virtualClient.close(), hostClient.close()]);
  for (const child of [runtime.child, hostServer.child]) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
}

await main();
