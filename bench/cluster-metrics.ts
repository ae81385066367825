// A connected cluster's metrics Prometheus (issue 35, cluster.metrics), in one run on one machine: the platform
// (with Debian's prometheus), a stand-alone host API server, its agent as installed (dist/) and one virtual cluster
// the agent runs. CPU is read from /proc:
//   1. the idle agent, cost control off (its Prometheus not running): the baseline;
//   2. cost control on, the cluster's metrics scraped every --interval: the agent (which now also answers its
//      Prometheus's scrapes and the platform's federation) and the agent's Prometheus, CPU and resident memory.
//
//   node bench/cluster-metrics.ts [--window seconds] [--interval 1s]

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startAgentProcess } from "../test/support/agent-process.ts";
import { API, AuthClient } from "../test/support/auth-client.ts";
import { runCli } from "../test/support/cli-run.ts";
import { startClusterApiServerProcess } from "../test/support/cluster-apiserver-process.ts";
import { startPlatformProcess } from "../test/support/platform-process.ts";
import { PROMETHEUS } from "../test/support/prometheus.ts";
import { waitFor } from "../test/support/wait-for.ts";
import { cpuTimeMs, memoryStatus } from "./lib/proc.ts";
import { formatMiB } from "./lib/stats.ts";

const { values } = parseArgs({
  options: { window: { type: "string", default: "30" }, interval: { type: "string", default: "1s" } },
});
const windowSeconds = Number(values.window);
const MGMT = `/kubernetes/management${API}`;
const log = (message: string) => process.stderr.write(`${message}\n`);
const installed = new URL("../dist/cli/main.js", import.meta.url).pathname;
if (!existsSync(installed)) throw new Error("run `npm run build` first: the agent is measured as installed (dist/)");
if (!existsSync(PROMETHEUS)) throw new Error(`${PROMETHEUS} is missing: apt-get install prometheus`);

/** CPU cores each pid used over the window. */
async function cores(pids: number[]): Promise<number[]> {
  const before = pids.map(cpuTimeMs);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowSeconds * 1000));
  const elapsed = performance.now() - started;
  return pids.map((pid, i) => (cpuTimeMs(pid) - before[i]) / elapsed);
}

function pidWithArgument(argument: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(argument)) return Number(entry);
    } catch {}
  }
  return undefined;
}

const root = await mkdtemp(join(tmpdir(), "bench-cluster-metrics-"));
const platform = await startPlatformProcess({
  extraArgs: ["--prometheus-binary", PROMETHEUS, "--cluster-heartbeat-seconds", "5"],
});
const host = await startClusterApiServerProcess();
const client = new AuthClient(platform.url, platform.caPem);
const admin = platform.adminKey;
let stopAgent = async () => {};
try {
  const env = { ...process.env, VIRTUALCLUSTER_HOME: join(root, "home") };
  const caFile = join(root, "platform-ca.pem");
  await writeFile(caFile, platform.caPem);
  await runCli(["platform", "login", platform.url, "--ca-file", caFile, "--access-key", admin], { env });
  const agentDir = join(root, "agent");
  const connect = ["cluster", "connect", "bench", "--host-kubeconfig", host.kubeconfig, "--data-dir", agentDir];
  const connected = await runCli([...connect, "--direct-host", "127.0.0.1", "--direct-port", "0", "--no-start"], {
    env,
  });
  if (connected.code !== 0) throw new Error(connected.stderr);
  const agent = await startAgentProcess(agentDir, process.env, installed, ["--prometheus-binary", PROMETHEUS]);
  stopAgent = () => agent.stop();
  const agentPid = agent.child.pid ?? 0;
  await client.send("POST", `${MGMT}/projects`, {
    token: admin,
    body: { apiVersion: "management.platform.sh/v1", kind: "Project", metadata: { name: "shop" }, spec: {} },
  });
  await client.send("POST", `${MGMT}/namespaces/p-shop/virtualclusterinstances`, {
    token: admin,
    body: {
      apiVersion: "management.platform.sh/v1",
      kind: "VirtualClusterInstance",
      metadata: { name: "vc1" },
      spec: { clusterRef: { cluster: "bench" } },
    },
  });
  const instance = async () =>
    (await client.send("GET", `${MGMT}/namespaces/p-shop/virtualclusterinstances/vc1`, { token: admin })).json();
  await waitFor(async () => (await instance()).status?.online === true, "vc1 online");
  log(`idle window (${windowSeconds} s), cost control off`);
  const [idleAgent] = await cores([agentPid]);
  const idleRss = memoryStatus(agentPid).vmRssKiB;

  const raw = `costControl: ${JSON.stringify({
    enabled: true,
    global: { metrics: { scrapeInterval: values.interval } },
    cluster: { metrics: { scrapeInterval: values.interval, retention: "1d" } },
  })}\n`;
  await client.send("PATCH", `${API}/configs/platform-config`, {
    token: admin,
    body: { spec: { raw } },
    contentType: "application/merge-patch+json",
  });
  const ready = async () =>
    (await client.send("GET", `${MGMT}/clusters/bench`, { token: admin }))
      .json()
      .status?.conditions?.some(
        (c: { type: string; status: string }) => c.type === "MetricsReady" && c.status === "True",
      );
  await waitFor(ready, "the cluster's metrics Prometheus");
  const prometheusPid = pidWithArgument(`--config.file=${join(agentDir, "prometheus", "prometheus.yml")}`);
  if (!prometheusPid) throw new Error("the agent's prometheus process was not found");
  // Past its start-up (WAL, first scrapes and compaction of the head).
  await new Promise((resolve) => setTimeout(resolve, 15_000));
  log(`scraped window (${windowSeconds} s), every ${values.interval}`);
  const [scrapedAgent, prometheus] = await cores([agentPid, prometheusPid]);
  const result = {
    window: `${windowSeconds} s`,
    interval: values.interval,
    idleAgent: { cores: idleAgent.toFixed(4), rss: formatMiB(idleRss) },
    scrapedAgent: { cores: scrapedAgent.toFixed(4), rss: formatMiB(memoryStatus(agentPid).vmRssKiB) },
    prometheus: {
      cores: prometheus.toFixed(4),
      rss: formatMiB(memoryStatus(prometheusPid).vmRssKiB),
      ratioToIdleAgentCpu: (prometheus / Math.max(idleAgent, 1e-6)).toFixed(1),
    },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await stopAgent();
  client.close();
  await platform.stop();
  await host.stop();
  await rm(root, { recursive: true, force: true });
}
