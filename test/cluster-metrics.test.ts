// cluster.metrics per connected cluster, with Debian's Prometheus: every part a real process (the platform, two
// stand-alone host API servers, their agents, a virtual cluster the agent runs). With costControl on, the agent of
// "edge" runs a metrics Prometheus with the effective settings (its Cluster's spec.costControl.metrics over the
// Config's cluster.metrics), scraping itself and its virtual cluster; the platform's Prometheus federates it through
// the tunnel, and the Cost report counts the virtual cluster from there (once: the platform's own /metrics leaves
// that cluster out). An agent without prometheus says so and is counted from its heartbeats. Changing the Cluster's
// override restarts it with the new settings (limits as GOMEMLIMIT and GOMAXPROCS, storageClass "" as a temporary
// TSDB); replicas 0 stops it; costEstimator.replicas 0 leaves its virtual clusters unestimated; turning costControl
// off, and deleting the cluster, stop it.
// An attacker's agent too: a non-admin who owns a Cluster mints its agent key and runs an agent of their own, whose
// metrics Prometheus "runs" and federates usage for another cluster's virtual cluster, for a virtual cluster not
// placed on its cluster and for another tenant's project. Only its own row reaches the platform's Prometheus and the
// Cost report; an answer that is not exposition text fails the scrape.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingHttpHeaders } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { TunnelClient } from "../src/agent/tunnel-client.ts";
import type { AgentProcess } from "./support/agent-process.ts";
import { API, AuthClient } from "./support/auth-client.ts";
import { type ClusterApiServerProcess, startClusterApiServerProcess } from "./support/cluster-apiserver-process.ts";
import { adminCliEnv, connectTestCluster } from "./support/connected-cluster.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { environOf, PROMETHEUS, prometheusPid, prometheusSkip, promql } from "./support/prometheus.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const MGMT = `/kubernetes/management${API}`;
const CONFIG = `${API}/configs/platform-config`;
const CPU = "vcp_usage_cpu_seconds_total";
const USAGE_SELECTOR = '{__name__=~"vcp_usage_.+"}';

/**
 * An agent of the cluster's owner's own making: says its metrics Prometheus runs, and answers the federation with
 * its own row and usage in others' names (one core-hour per second), or, once `malformed`, with text that is not
 * exposition text. It records the match[] it is asked for.
 */
function attackerAgent() {
  const started = Date.now();
  const state = { malformed: false, matchesAsked: new Set<string>() };
  const forged = () => {
    const seconds = (Date.now() - started) / 1000;
    const coreHourPerSecond = Math.round(seconds * 3600);
    return [
      `# TYPE ${CPU} counter`,
      `${CPU}{cluster="rogue",component="agent"} ${seconds.toFixed(3)}`,
      `${CPU}{project="shop",cluster="edge",virtualcluster="vc1",component="virtualcluster"} ${coreHourPerSecond}`,
      `${CPU}{project="shop",cluster="rogue",virtualcluster="vc1",component="virtualcluster"} ${coreHourPerSecond}`,
      `${CPU}{project="victim-shop",cluster="rogue",virtualcluster="web",component="virtualcluster"} ${coreHourPerSecond}`,
      `${CPU}{project="victim-shop",cluster="other",virtualcluster="web",component="virtualcluster"} ${coreHourPerSecond}`,
      "",
    ].join("\n");
  };
  const malformed = `${CPU}{cluster="rogue",component="agent"} 1\n${CPU}{project="shop",cluster="rogue" 99\n`;
  const onStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const url = new URL(String(headers[":path"]), "http://agent");
    const method = String(headers[":method"]);
    const reply = (body: unknown, status = 200) => {
      stream.respond({ ":status": status, "content-type": "application/json" });
      stream.end(JSON.stringify(body));
    };
    stream.resume();
    if (url.pathname === "/agent/v1/info") return reply({ spaces: [], virtualClusters: [] });
    if (url.pathname === "/agent/v1/metrics" && method === "PUT") return reply({ phase: "Running", message: "ok" });
    if (url.pathname === "/agent/v1/metrics" && method === "DELETE") return reply({ phase: "Off" });
    if (url.pathname === "/agent/v1/metrics/federate") {
      for (const match of url.searchParams.getAll("match[]")) state.matchesAsked.add(match);
      return reply({ text: state.malformed ? malformed : forged() });
    }
    return reply({ message: "no" }, 404);
  };
  return { state, onStream };
}

const up = async (url: string) =>
  fetch(`${url}/-/ready`).then(
    (r) => r.ok,
    () => false,
  );

describe("cluster.metrics per connected cluster, with Debian's Prometheus", { skip: prometheusSkip }, () => {
  let root: string;
  let platform: PlatformProcess;
  let client: AuthClient;
  let admin: string;
  const hosts: Record<string, ClusterApiServerProcess> = {};
  const agents: Record<string, AgentProcess> = {};
  const agentDirs: Record<string, string> = {};
  let rogue: TunnelClient | undefined;
  const attacker = attackerAgent();

  const cluster = async (name: string) =>
    (await client.send("GET", `${MGMT}/clusters/${name}`, { token: admin })).json();
  const metricsCondition = async (name: string) =>
    (await cluster(name)).status?.conditions?.find((c: { type: string }) => c.type === "MetricsReady");
  const writeCost = async (costControl: Record<string, unknown>) => {
    const reply = await client.send("PATCH", CONFIG, {
      token: admin,
      body: { spec: { raw: `costControl: ${JSON.stringify(costControl)}\n` } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 200, reply.body);
  };
  /** The URL of the agent's Prometheus, from the last "started" line of its log. */
  const agentPrometheus = (name: string) => {
    const lines = agents[name]
      .output()
      .split("\n")
      .filter((line) => line.includes("cluster metrics prometheus started"));
    return /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(lines.at(-1) ?? "")?.[1];
  };
  const platformPrometheus = async () => {
    const config = (await client.send("GET", CONFIG, { token: admin })).json();
    const condition = (config.status.conditions ?? []).find((c: { type: string }) => c.type === "MetricsReady");
    return /runs at (http:\/\/127\.0\.0\.1:\d+)/.exec(condition?.message ?? "")?.[1];
  };
  const patchCluster = async (costControl: Record<string, unknown>) => {
    const reply = await client.send("PATCH", `${MGMT}/clusters/edge`, {
      token: admin,
      body: { spec: { costControl } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 200, reply.body);
  };
  const flags = async (url: string) =>
    ((await (await fetch(`${url}/api/v1/status/flags`)).json()) as { data: Record<string, string> }).data;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "cluster-metrics-"));
    platform = await startPlatformProcess({
      extraArgs: ["--prometheus-binary", PROMETHEUS, "--cluster-heartbeat-seconds", "1"],
    });
    client = new AuthClient(platform.url, platform.caPem);
    admin = platform.adminKey;
    const env = await adminCliEnv(root, platform);
    // "edge" runs its metrics with Debian's prometheus; "plain" has none (a binary that does not exist).
    for (const [name, binary] of [
      ["edge", PROMETHEUS],
      ["plain", join(root, "no-prometheus-here")],
    ]) {
      hosts[name] = await startClusterApiServerProcess();
      agentDirs[name] = join(root, `agent-${name}`);
      agents[name] = await connectTestCluster({
        env,
        name,
        hostKubeconfig: hosts[name].kubeconfig,
        dataDir: agentDirs[name],
        agentArgs: ["--prometheus-binary", binary],
      });
    }
    const project = await client.send("POST", `${MGMT}/projects`, {
      token: admin,
      body: { apiVersion: V1, kind: "Project", metadata: { name: "shop" }, spec: {} },
    });
    assert.equal(project.status, 201, project.body);
    const created = await client.send("POST", `${MGMT}/namespaces/p-shop/virtualclusterinstances`, {
      token: admin,
      body: {
        apiVersion: V1,
        kind: "VirtualClusterInstance",
        metadata: { name: "vc1" },
        spec: { clusterRef: { cluster: "edge" } },
      },
    });
    assert.equal(created.status, 201, created.body);
    await waitFor(
      async () =>
        (await client.send("GET", `${MGMT}/namespaces/p-shop/virtualclusterinstances/vc1`, { token: admin })).json()
          .status?.online === true,
      "the virtual cluster is online",
    );
    // The Cluster overrides retention and scrape interval; the storage size comes from the Config.
    const override = await client.send("PATCH", `${MGMT}/clusters/edge`, {
      token: admin,
      body: { spec: { costControl: { metrics: { retention: "3d", scrapeInterval: "1s" } } } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(override.status, 200, override.body);
  });

  after(async () => {
    await rogue?.close();
    await Promise.all(Object.values(agents).map((agent) => agent.stop()));
    client?.close();
    await platform?.stop();
    await Promise.all(Object.values(hosts).map((host) => host.stop()));
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("with costControl off no cluster runs a Prometheus", async () => {
    await waitFor(async () => (await cluster("edge")).status?.online === true, "edge online");
    assert.equal(await metricsCondition("edge"), undefined);
    assert.equal(agentPrometheus("edge"), undefined);
  });

  it("enabling it runs the cluster's Prometheus with its Cluster's settings over the Config's", async () => {
    await writeCost({
      enabled: true,
      global: { metrics: { scrapeInterval: "1s" } },
      cluster: { metrics: { retention: "5d", scrapeInterval: "2s", storage: { size: "50Mi" } } },
      prices: { cpuCoreHour: 2 },
    });
    await waitFor(async () => (await metricsCondition("edge"))?.status === "True", "edge MetricsReady");
    assert.match((await metricsCondition("edge")).message, /retention 3d, at most 50Mi, scrape every 1s/);
    const url = agentPrometheus("edge");
    assert.ok(url, agents.edge.output());
    const set = await flags(url);
    assert.equal(set["storage.tsdb.retention.time"], "3d");
    assert.equal(set["storage.tsdb.retention.size"], "50MiB");
    const config = ((await (await fetch(`${url}/api/v1/status/config`)).json()) as { data: { yaml: string } }).data;
    assert.match(config.yaml, /scrape_interval: 1s/);
    await waitFor(async () => {
      const answer = (await (await fetch(`${url}/api/v1/targets`)).json()) as {
        data: { activeTargets: { labels: { job: string }; health: string }[] };
      };
      const healthy = answer.data.activeTargets.filter((t) => t.health === "up").map((t) => t.labels.job);
      return healthy.includes("agent") && healthy.some((job) => job.startsWith("virtualcluster-"));
    }, "the agent and its virtual cluster scraped");
    const series = await promql(url, 'vcp_usage_cpu_seconds_total{cluster="edge"}', new Date().toISOString());
    const vc = series.find((s) => s.metric.virtualcluster === "vc1");
    assert.equal(vc?.metric.project, "shop");
    assert.equal(vc?.metric.component, "virtualcluster");
    assert.ok(series.some((s) => s.metric.component === "agent"));
  });

  it("an agent without prometheus says so and is counted from its heartbeats", async () => {
    await waitFor(async () => (await metricsCondition("plain"))?.status === "False", "plain MetricsReady False");
    const condition = await metricsCondition("plain");
    assert.equal(condition.reason, "PrometheusFailed");
    assert.match(condition.message, /no-prometheus-here.*install Debian's prometheus/);
    const text = (await client.send("GET", "/metrics", { token: admin, accept: "text/plain" })).body;
    assert.match(text, /vcp_usage_cpu_seconds_total\{project="",cluster="plain",virtualcluster="",component="agent"\}/);
  });

  it("the platform's Prometheus federates the cluster's series, and the Cost report counts them once", async () => {
    const platformUrl = await platformPrometheus();
    assert.ok(platformUrl);
    await waitFor(async () => {
      const got = await promql(
        platformUrl,
        'vcp_usage_cpu_seconds_total{cluster="edge",virtualcluster="vc1"}',
        new Date().toISOString(),
      );
      return got.length > 0;
    }, "vc1's series in the platform's Prometheus, through federation");
    // The platform's own /metrics leaves the federated cluster out, so nothing is counted twice.
    const text = (await client.send("GET", "/metrics", { token: admin, accept: "text/plain" })).body;
    assert.doesNotMatch(text, /virtualcluster="vc1"/);
    assert.doesNotMatch(text, /cluster="edge",virtualcluster="",component="agent"/);
    const series = await promql(
      platformUrl,
      'vcp_usage_cpu_seconds_total{virtualcluster="vc1"}',
      new Date().toISOString(),
    );
    assert.equal(series.length, 1, JSON.stringify(series));
    // Some time of the virtual cluster's in the range, then the report: its figure is Prometheus's answer.
    await waitFor(async () => {
      const end = new Date().toISOString();
      const samples = await promql(
        platformUrl,
        'count_over_time(vcp_usage_cpu_seconds_total{virtualcluster="vc1"}[5m])',
        end,
      );
      return (samples[0]?.value ?? 0) >= 3;
    }, "a few federated samples");
    const end = new Date().toISOString();
    const start = new Date(Date.now() - 5 * 60_000).toISOString();
    const reply = await client.send("GET", `/platform/cost?start=${start}&end=${end}`, { token: admin });
    assert.equal(reply.status, 200, reply.body);
    const report = reply.json() as {
      rows: { project: string; virtualcluster: string; cpuCoreHours: number; cost: number }[];
      queries: Record<string, string>;
    };
    const row = report.rows.find((r) => r.project === "shop" && r.virtualcluster === "vc1");
    assert.ok(row, JSON.stringify(report.rows));
    const answer = (await promql(platformUrl, report.queries.cpu, end)).find((s) => s.metric.virtualcluster === "vc1");
    assert.ok(Math.abs(row.cpuCoreHours - (answer?.value ?? 0) / 3600) <= 1e-6, `${row.cpuCoreHours}`);
    assert.ok(row.cpuCoreHours > 0);
  });

  it("the federation route is for the platform's Prometheus and viewers, not for every user", async () => {
    await client.createUser(admin, "member");
    const key = await client.createKey(admin, "member-key", { user: "member" });
    assert.equal((await client.send("GET", "/platform/clusters/edge/federate", { token: key })).status, 403);
    const federated = await client.send(
      "GET",
      `/platform/clusters/edge/federate?match[]=${encodeURIComponent('{__name__="vcp_usage_cpu_seconds_total"}')}`,
      {
        token: admin,
        accept: "text/plain",
      },
    );
    assert.equal(federated.status, 200, federated.body);
    assert.match(federated.body, /vcp_usage_cpu_seconds_total\{.*virtualcluster="vc1"/);
  });

  it("costEstimator.replicas 0 shows the cluster's virtual clusters' usage without an estimate", async () => {
    const report = async () => {
      const end = new Date().toISOString();
      const start = new Date(Date.now() - 5 * 60_000).toISOString();
      const reply = await client.send("GET", `/platform/cost?start=${start}&end=${end}`, { token: admin });
      assert.equal(reply.status, 200, reply.body);
      const rows = reply.json().rows as {
        virtualcluster: string;
        cpuCoreHours: number;
        cost: number;
        estimated: boolean;
      }[];
      const vc1 = rows.find((r) => r.virtualcluster === "vc1");
      assert.ok(vc1, JSON.stringify(rows));
      return vc1;
    };
    await patchCluster({ costEstimator: { replicas: 0 } });
    const off = await report();
    assert.equal(off.estimated, false);
    assert.equal(off.cost, 0);
    assert.ok(off.cpuCoreHours > 0, "the usage is still shown");
    await patchCluster({ costEstimator: { replicas: 1 } });
    const on = await report();
    assert.equal(on.estimated, true);
    assert.ok(on.cost > 0, JSON.stringify(on));
  });

  it("a cluster's owner's own agent gets only its own usage into the platform's Prometheus and the Cost report", async () => {
    await client.createUser(admin, "mallory");
    const mallory = await client.createKey(admin, "key-mallory", { user: "mallory" });
    const created = await client.send("POST", `${MGMT}/clusters`, {
      token: admin,
      body: { apiVersion: V1, kind: "Cluster", metadata: { name: "rogue" }, spec: { owner: { user: "mallory" } } },
    });
    assert.equal(created.status, 201, created.body);
    const minted = await client.send("POST", `${MGMT}/clusters/rogue/accesskey`, { token: mallory, body: {} });
    assert.equal(minted.status, 201, minted.body);
    rogue = new TunnelClient({
      cluster: "rogue",
      urls: [platform.url],
      caPem: platform.caPem,
      insecure: false,
      accessKey: minted.json().accessKey,
      onStream: attacker.onStream,
    });
    rogue.start();
    await waitFor(async () => (await metricsCondition("rogue"))?.status === "True", "rogue's MetricsReady");

    // What the platform's Prometheus stored from rogue's scrapes: its own row, nobody else's.
    const prometheus = (await platformPrometheus()) ?? "";
    const scraped = `${CPU}{job="cluster-rogue"}`;
    await waitFor(async () => {
      const got = await promql(prometheus, `count_over_time(${scraped}[1m])`, new Date().toISOString());
      return (got[0]?.value ?? 0) >= 3;
    }, "three scrapes of rogue's federation");
    const stored = await promql(prometheus, scraped, new Date().toISOString());
    assert.deepEqual(
      stored.map(({ metric }) => [metric.cluster, metric.component, metric.project, metric.virtualcluster]),
      [["rogue", "agent", undefined, undefined]],
      JSON.stringify(stored),
    );
    const vc1 = await promql(prometheus, `${CPU}{virtualcluster="vc1"}`, new Date().toISOString());
    assert.deepEqual(
      vc1.map(({ metric }) => [metric.job, metric.cluster]),
      [["cluster-edge", "edge"]],
    );
    const end = new Date().toISOString();
    const start = new Date(Date.now() - 5 * 60_000).toISOString();
    const reply = await client.send("GET", `/platform/cost?start=${start}&end=${end}`, { token: admin });
    assert.equal(reply.status, 200, reply.body);
    const rows = reply.json().rows as { project: string; virtualcluster: string; cpuCoreHours: number }[];
    assert.deepEqual(
      rows.filter((r) => r.project === "victim-shop"),
      [],
    );
    const shop = rows.find((r) => r.project === "shop" && r.virtualcluster === "vc1");
    assert.ok(shop && shop.cpuCoreHours < 0.5, `vc1 billed for rogue's numbers: ${JSON.stringify(shop)}`);

    // The federation route asks the agent for usage alone, whatever its caller asks, and passes on its own row only.
    const federated = await client.send(
      "GET",
      `/platform/clusters/rogue/federate?match[]=${encodeURIComponent('{__name__=~".+"}')}`,
      { token: admin, accept: "text/plain" },
    );
    assert.equal(federated.status, 200, federated.body);
    const samples = federated.body.split("\n").filter((line) => line && !line.startsWith("#"));
    assert.equal(samples.length, 1, federated.body);
    assert.match(samples[0], /^vcp_usage_cpu_seconds_total\{cluster="rogue",component="agent"\} [\d.]+$/);
    assert.deepEqual([...attacker.state.matchesAsked], [USAGE_SELECTOR]);
  });

  it("an agent's federation answer that is not exposition text is refused whole, and the scrape fails", async () => {
    attacker.state.malformed = true;
    const refused = await client.send("GET", "/platform/clusters/rogue/federate", {
      token: admin,
      accept: "text/plain",
    });
    assert.equal(refused.status, 503, refused.body);
    assert.match(refused.json().message, /cluster "rogue": its agent's federation answer was refused: line 2: /);
    const prometheus = (await platformPrometheus()) ?? "";
    await waitFor(async () => {
      const up = await promql(prometheus, 'up{job="cluster-rogue"}', new Date().toISOString());
      return up.length === 1 && up[0].value === 0;
    }, "rogue's scrape failing");
  });

  it("replicas 0 stops the cluster's Prometheus, and the platform counts the cluster from heartbeats", async () => {
    const url = agentPrometheus("edge") ?? "";
    await patchCluster({ metrics: { replicas: 0 } });
    await waitFor(async () => (await metricsCondition("edge"))?.reason === "ReplicasZero", "MetricsReady ReplicasZero");
    assert.equal((await metricsCondition("edge")).status, "False");
    await waitFor(async () => !(await up(url)), "the cluster's prometheus stopped");
    await waitFor(async () => {
      const text = (await client.send("GET", "/metrics", { token: admin, accept: "text/plain" })).body;
      return /vcp_usage_cpu_seconds_total\{project="",cluster="edge",virtualcluster="",component="agent"\}/.test(text);
    }, "edge counted from its heartbeats");
    await patchCluster({ metrics: { replicas: 1 } });
    await waitFor(async () => (await metricsCondition("edge"))?.status === "True", "running again");
  });

  it("limits and storageClass reach the cluster's Prometheus: GOMEMLIMIT, GOMAXPROCS, a temporary TSDB", async () => {
    await patchCluster({
      metrics: { resources: { limits: { memory: "512Mi", cpu: "1500m" } }, storage: { storageClass: "" } },
    });
    await waitFor(
      async () =>
        /memory limit 512Mi, cpu limit 1500m, temporary storage/.test((await metricsCondition("edge"))?.message ?? ""),
      "the new limits",
    );
    const url = agentPrometheus("edge") ?? "";
    const pid = await prometheusPid(url);
    assert.ok(pid, url);
    const env = await environOf(pid);
    assert.equal(env.GOMEMLIMIT, String(Math.floor(512 * 2 ** 20 * 0.9)));
    assert.equal(env.GOMAXPROCS, "2");
    const path = (await flags(url))["storage.tsdb.path"];
    assert.ok(path.startsWith(join(tmpdir(), "vcp-prometheus-")), path);
  });

  it("a new override restarts the cluster's Prometheus with it", async () => {
    const before = agentPrometheus("edge");
    const changed = await client.send("PATCH", `${MGMT}/clusters/edge`, {
      token: admin,
      body: { spec: { costControl: { metrics: { retention: "4d" } } } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(changed.status, 200, changed.body);
    await waitFor(
      async () => /retention 4d/.test((await metricsCondition("edge"))?.message ?? ""),
      "the new retention",
    );
    const url = agentPrometheus("edge");
    assert.ok(url);
    assert.equal((await flags(url))["storage.tsdb.retention.time"], "4d");
    if (before !== url) assert.equal(await up(before ?? ""), false, "the old one stopped");
  });

  it("turning costControl off stops the cluster's Prometheus; deleting the cluster stops it too", async () => {
    const url = agentPrometheus("edge") ?? "";
    await writeCost({ enabled: false });
    await waitFor(async () => !(await up(url)), "the cluster's prometheus stopped");
    await waitFor(async () => (await metricsCondition("edge")) === undefined, "MetricsReady removed");
    assert.equal(existsSync(join(agentDirs.edge, "prometheus", "settings.json")), false);

    await writeCost({ enabled: true, global: { metrics: { scrapeInterval: "1s" } } });
    await waitFor(async () => (await metricsCondition("edge"))?.status === "True", "running again");
    const again = agentPrometheus("edge") ?? "";
    assert.ok(await up(again));
    const deleted = await client.send("DELETE", `${MGMT}/clusters/edge`, { token: admin });
    assert.equal(deleted.status, 200, deleted.body);
    await waitFor(async () => !(await up(again)), "the deleted cluster's prometheus stopped");
  });
});
