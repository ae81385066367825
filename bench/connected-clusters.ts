// Connected clusters (issue 34), in one run on one machine: a stand-alone host API server, the platform and the
// host's agent as child processes, autocannon here.
//   1. GET one ConfigMap straight from the host (its admin token): the baseline;
//   2. the same GET through the platform's proxy (/kubernetes/cluster/<name>/..., an access key; the agent
//      impersonates the platform user, so the host also checks the impersonation);
//   3. the same GET at the agent's direct endpoint (a DirectClusterEndpointToken verified offline).
// Rounds alternate 1, 2, 3 and the best round of each counts (load from elsewhere only lowers a round). Besides
// requests per second, CPU per request is read from /proc for every process on the path (host, platform, agent):
// on two shared cores it is the figure that holds when throughput does not.
//   4. Watch latency: ConfigMaps written on the host at --rate per second while one watch reads them straight from the
//      host and one through the platform's tunnel; latency = event received - write sent, p50/p99 of each.
//   5. The agent's resident memory after all of it.
//
// The straight GET runs twice: with the host's admin token, and exactly as the agent sends it (its ServiceAccount's
// token and Impersonate-User), which costs the host more (token and impersonation checks, RBAC for the user).
//
//   node bench/connected-clusters.ts [--duration seconds] [--rounds n] [--rate events-per-second] [--events n]
//                                    [--profile DIR] [--agent-node-options="<node flags for the agent>"]
//
// --profile DIR: after the rounds, CPU profiles (.cpuprofile in DIR, summarised here) of the agent under the direct
// endpoint's load, and of the platform and of the agent under the proxy's (no watch events then).

import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connectCluster } from "../src/agent/connect-cluster.ts";
import { PlatformClient } from "../src/virtualcluster/lifecycle/platform-client.ts";
import { type AgentProcess, startAgentProcess } from "../test/support/agent-process.ts";
import { startClusterApiServerProcess } from "../test/support/cluster-apiserver-process.ts";
import { type CpuProfile, summariseProfile } from "./lib/cpu-profile.ts";
import { collectGarbage, inspectorEvaluate, profileDuring } from "./lib/inspector.ts";
import { type LoadResult, load } from "./lib/load.ts";
import { startBenchPlatform } from "./lib/platform.ts";
import { cpuTimeMs, memoryStatus } from "./lib/proc.ts";
import { formatInt, formatMiB, formatMs, formatRatio, summarize } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    rate: { type: "string", default: "100" },
    events: { type: "string", default: "1000" },
    connections: { type: "string", default: "16" },
    profile: { type: "string" },
    "agent-node-options": { type: "string" },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const rate = Number(values.rate);
/** Profiling is what such a run is for: no watch events. */
const events = values.profile ? 0 : Number(values.events);
const connections = Number(values.connections);
const NAMESPACE = "bench";
const CONFIGMAP = `/api/v1/namespaces/${NAMESPACE}/configmaps/bench`;
const log = (message: string) => process.stderr.write(`${message}\n`);

/** JSON over HTTPS for setup and the watch writer. */
function call(base: string, ca: string, token: string, method: string, path: string, body?: unknown, agent?: Agent) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      new URL(path, base),
      {
        method,
        ca,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json",
          ...(payload ? { "content-type": "application/json" } : {}),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

async function expect(status: number, reply: Promise<{ status: number; body: string }>, what: string) {
  const answer = await reply;
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${answer.body}`);
  return JSON.parse(answer.body || "{}");
}

const root = await mkdtemp(join(tmpdir(), "bench-clusters-"));
const host = await startClusterApiServerProcess();
const platform = await startBenchPlatform();
let agent: AgentProcess | undefined;
try {
  const hostToken = /token: (\S+)/.exec(await readFile(host.kubeconfig, "utf8"))?.[1] ?? "";
  const hostCall = (method: string, path: string, body?: unknown) =>
    call(host.url, host.caPem, hostToken, method, path, body);
  await expect(201, hostCall("POST", "/api/v1/namespaces", { metadata: { name: NAMESPACE } }), "namespace");
  await expect(
    201,
    hostCall("POST", `/api/v1/namespaces/${NAMESPACE}/configmaps`, { metadata: { name: "bench" }, data: { k: "v" } }),
    "configmap",
  );
  await expect(
    201,
    hostCall("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NAMESPACE}/rolebindings`, {
      metadata: { name: "platform-admin" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "platform:user:admin" }],
    }),
    "rolebinding",
  );

  // Connect the host as `virtualcluster cluster connect` does.
  const mgmt = "/kubernetes/management/apis/management.platform.sh/v1";
  const platformCall = (method: string, path: string, body?: unknown) =>
    call(platform.url, platform.ca, platform.token, method, path, body);
  const agentDir = join(root, "agent");
  await connectCluster({
    name: "bench",
    hostKubeconfig: host.kubeconfig,
    dataDir: agentDir,
    platform: new PlatformClient({
      host: platform.url,
      accessKey: platform.token,
      certificateAuthorityData: Buffer.from(platform.ca).toString("base64"),
    }),
    direct: { host: "127.0.0.1", port: 0 },
  });
  const agentToken = JSON.parse(await readFile(join(agentDir, "host.kubeconfig"), "utf8")).users[0].user.token;
  // The agent as installed (dist/, what `npm install` builds): the sources run through type stripping, which costs
  // about 10 MB more.
  const installed = new URL("../dist/cli/main.js", import.meta.url).pathname;
  if (!existsSync(installed)) throw new Error("run `npm run build` first: the agent is measured as installed (dist/)");
  const agentNodeOptions = values["agent-node-options"];
  const agentEnv = agentNodeOptions ? { ...process.env, NODE_OPTIONS: agentNodeOptions } : process.env;
  agent = await startAgentProcess(agentDir, agentEnv, installed);
  const agentPid = agent.child.pid ?? 0;
  for (;;) {
    const cluster = await expect(200, platformCall("GET", `${mgmt}/clusters/bench`), "cluster");
    if (cluster.status?.online) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const token = await expect(
    201,
    platformCall("POST", `${mgmt}/directclusterendpointtokens`, {
      apiVersion: "management.platform.sh/v1",
      kind: "DirectClusterEndpointToken",
      spec: { ttl: 3600, scope: { clusters: [{ cluster: "bench" }] } },
    }),
    "token",
  );
  const directUrl = agent.directUrl ?? "";

  const idleMemory = memoryStatus(agentPid);
  const impersonating = { "impersonate-user": "platform:user:admin" };
  const ways = {
    host: { url: host.url, token: hostToken, path: CONFIGMAP },
    "host-as-agent": { url: host.url, token: agentToken, path: CONFIGMAP, headers: impersonating },
    platform: { url: platform.url, token: platform.token, path: `/kubernetes/cluster/bench${CONFIGMAP}` },
    direct: { url: directUrl, token: token.status.token as string, path: CONFIGMAP },
  } as const;
  const pids = { host: host.child.pid ?? 0, platform: platform.pid, agent: agentPid };
  type Way = keyof typeof ways;
  const labels: Record<Way, string> = {
    host: "straight to the host (its admin token)",
    "host-as-agent": "straight to the host as the agent sends it (its ServiceAccount, impersonating)",
    platform: "through the platform's proxy",
    direct: "direct endpoint (agent)",
  };
  interface Round extends LoadResult {
    /** Server CPU ms per request, by process. */
    cpuPerRequest: Record<string, number>;
  }
  const best: Partial<Record<Way, Round>> = {};
  for (let round = 0; round < rounds; round++) {
    for (const way of Object.keys(ways) as Way[]) {
      const target = ways[way];
      const headers = "headers" in target ? { authorization: `Bearer ${target.token}`, ...target.headers } : undefined;
      const requests = headers ? [{ method: "GET", path: target.path, headers }] : undefined;
      await load({ ...target, connections, duration: 1, requests }); // warm-up, not measured
      const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuTimeMs(pid)]));
      const result = await load({ ...target, connections, duration, requests });
      const cpuPerRequest = Object.fromEntries(
        Object.entries(pids).map(([name, pid]) => [name, (cpuTimeMs(pid) - before[name]) / Math.max(1, result.ok)]),
      );
      log(
        `round ${round + 1} ${way}: ${formatInt(result.rate)}/s, errors ${result.errors}, non-2xx ${result.responses - result.ok}`,
      );
      if (!best[way] || result.rate > (best[way]?.rate ?? 0)) best[way] = { ...result, cpuPerRequest };
    }
  }

  if (values.profile) {
    const dir = values.profile;
    await mkdir(dir, { recursive: true });
    const root = new URL("..", import.meta.url).pathname;
    const runs: [string, number, Way][] = [
      ["agent-direct", agentPid, "direct"],
      ["platform-proxy", platform.pid, "platform"],
      ["agent-proxy", agentPid, "platform"],
    ];
    for (const [name, pid, way] of runs) {
      await load({ ...ways[way], connections, duration: 1 });
      const profiled = await profileDuring(pid, async (start) => {
        await start();
        return load({ ...ways[way], connections, duration });
      });
      if (!profiled) throw new Error(`no inspector for ${name} (port 9229 taken?)`);
      await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profiled.profile));
      console.log(`\n## ${name}: ${formatInt(profiled.result.rate)}/s\n`);
      console.log(summariseProfile(profiled.profile as CpuProfile, { root, top: 30 }));
      // Free port 9229 for the next process's inspector.
      await inspectorEvaluate(pid, "setTimeout(() => process.getBuiltinModule('node:inspector').close(), 100), 0");
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  // Watch latency: one watch on the host, one through the platform; writes at `rate` per second.
  const list = await expect(200, hostCall("GET", `/api/v1/namespaces/${NAMESPACE}/configmaps`), "list");
  const from = list.metadata.resourceVersion;
  const sent = new Map<string, number>();
  const latencies: Record<"host" | "platform", number[]> = { host: [], platform: [] };
  const arrived: Record<"host" | "platform", Map<string, number>> = { host: new Map(), platform: new Map() };
  const addedLatency = () =>
    [...arrived.platform].flatMap(([name, at]) => {
      const fromHost = arrived.host.get(name);
      return fromHost === undefined ? [] : [at - fromHost];
    });
  const watchOn = (which: "host" | "platform") =>
    new Promise<() => void>((resolve, reject) => {
      const way = ways[which];
      const path = `${which === "host" ? "" : "/kubernetes/cluster/bench"}/api/v1/namespaces/${NAMESPACE}/configmaps?watch=1&resourceVersion=${from}`;
      const req = request(
        new URL(path, way.url),
        { ca: which === "host" ? host.caPem : platform.ca, headers: { authorization: `Bearer ${way.token}` } },
        (res) => {
          let buffered = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            const now = performance.now();
            buffered += chunk;
            let newline = buffered.indexOf("\n");
            while (newline !== -1) {
              const line = buffered.slice(0, newline);
              buffered = buffered.slice(newline + 1);
              const name = (JSON.parse(line) as { object: { metadata: { name: string } } }).object.metadata.name;
              const at = sent.get(name);
              if (at !== undefined) {
                latencies[which].push(now - at);
                arrived[which].set(name, now);
              }
              newline = buffered.indexOf("\n");
            }
          });
          resolve(() => req.destroy());
        },
      );
      req.on("error", (error) => (error.message.includes("aborted") ? undefined : reject(error)));
      req.end();
    });
  const stops = [await watchOn("host"), await watchOn("platform")];
  const writer = new Agent({ keepAlive: true, ca: host.caPem });
  const started = performance.now();
  for (let i = 0; i < events; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const name = `event-${i}`;
    sent.set(name, performance.now());
    // Writes still in flight when the run ends are cut off with the writer's connections.
    call(
      host.url,
      host.caPem,
      hostToken,
      "POST",
      `/api/v1/namespaces/${NAMESPACE}/configmaps`,
      { metadata: { name } },
      writer,
    ).catch(() => {});
  }
  while (latencies.host.length < events || latencies.platform.length < events) {
    if (performance.now() - started > (events / rate) * 1000 + 30_000) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const stop of stops) stop();
  writer.destroy();
  const memory = memoryStatus(agentPid);
  // Quiet again: the agent gives its spare heap back after a few seconds without work (heap-compactor.ts).
  let settled = memoryStatus(agentPid);
  for (let look = 0; look < 15; look++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = memoryStatus(agentPid);
    if (now.vmRssKiB >= settled.vmRssKiB && look >= 6) break;
    settled = now;
  }

  const heap = await collectGarbage(agentPid);

  // Report.
  const baseline = best.host as Round;
  const asAgent = best["host-as-agent"] as Round;
  const cpuSum = (round: Round) => Object.values(round.cpuPerRequest).reduce((sum, ms) => sum + ms, 0);
  console.log(
    `\nGET one ConfigMap, ${connections} connections, best of ${rounds} rounds of ${duration} s (alternating)\n`,
  );
  console.log(
    "| path | requests/s | ratio (admin token; as the agent sends it) | p50 ms | p99 ms | CPU ms/request: host + platform + agent = sum (ratio of sums, as the agent sends it) |",
  );
  console.log("|---|---:|---:|---:|---:|---|");
  for (const way of Object.keys(ways) as Way[]) {
    const round = best[way] as Round;
    const cpu = round.cpuPerRequest;
    console.log(
      `| ${labels[way]} | ${formatInt(round.rate)} | ${formatRatio(round.rate / baseline.rate)}; ${formatRatio(round.rate / asAgent.rate)} | ${formatMs(round.latency.p50)} | ${formatMs(round.latency.p99)} | ${cpu.host.toFixed(3)} + ${cpu.platform.toFixed(3)} + ${cpu.agent.toFixed(3)} = ${cpuSum(round).toFixed(3)} (${formatRatio(cpuSum(asAgent) / cpuSum(round))}) |`,
    );
  }
  const direct = summarize(latencies.host);
  const tunnel = summarize(latencies.platform);
  const added = summarize(addedLatency());
  console.log(`\nWatch at ${rate} events/s, ${events} events: latency from write sent to event received\n`);
  console.log("| watch | events | p50 ms | p99 ms | max ms |");
  console.log("|---|---:|---:|---:|---:|");
  console.log(
    `| straight from the host | ${direct.samples} | ${formatMs(direct.p50)} | ${formatMs(direct.p99)} | ${formatMs(direct.max)} |`,
  );
  console.log(
    `| through the platform's tunnel | ${tunnel.samples} | ${formatMs(tunnel.p50)} | ${formatMs(tunnel.p99)} | ${formatMs(tunnel.max)} |`,
  );
  console.log(
    `| added by the tunnel (same event, tunnel - host) | ${added.samples} | ${formatMs(added.p50)} | ${formatMs(added.p99)} | ${formatMs(added.max)} |`,
  );
  console.log(
    `\nAgent memory: RSS idle (connected, before the runs) ${formatMiB(idleMemory.vmRssKiB)}; right after the runs ${formatMiB(memory.vmRssKiB)}, peak ${formatMiB(memory.vmHwmKiB)}; quiet again ${formatMiB(settled.vmRssKiB)}; V8 heap after a full collection ${heap ? `${formatMiB(heap.usedBytes / 1024)} used of ${formatMiB(heap.totalBytes / 1024)}` : "n/a"}`,
  );
} finally {
  await agent?.stop();
  await platform.stop();
  await host.stop();
  await rm(root, { recursive: true, force: true });
}
