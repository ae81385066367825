// costControl on a real platform with Debian's Prometheus: enabling it starts Prometheus with the Config's
// retention, size and scrape interval, scraping the platform's usage series (labelled by project, cluster and
// virtual cluster); known load (virtual clusters reporting usage as their runtimes do, API requests) shows in the
// cost report exactly as PromQL answers it, priced by the Config; replicas 0 stops it, and its limits and storage
// class reach the process (GOMEMLIMIT, GOMAXPROCS, a temporary TSDB); turning it off stops Prometheus.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";
import { environOf, PROMETHEUS, prometheusPid, prometheusSkip, promql } from "./support/prometheus.ts";
import { waitFor } from "./support/wait-for.ts";

const V1 = "management.platform.sh/v1";
const CONFIG = `${API}/configs/platform-config`;

interface Row {
  project: string;
  virtualcluster: string;
  cpuCoreHours: number;
  memoryGiBHours: number;
  storageGiBMonths: number;
  apiRequests: number;
  cost: number;
}

describe("costControl with Debian's Prometheus", { skip: prometheusSkip }, () => {
  let platform: PlatformProcess;
  let client: AuthClient;
  let admin: string;
  let prometheusUrl = "";
  let temporaryTsdb = "";

  const writeCost = async (costControl: Record<string, unknown>) => {
    const reply = await client.send("PATCH", CONFIG, {
      token: admin,
      body: { spec: { raw: `costControl: ${JSON.stringify(costControl)}\n` } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 200, reply.body);
  };
  const condition = async () => {
    const config = (await client.send("GET", CONFIG, { token: admin })).json();
    return (config.status.conditions ?? []).find((c: { type: string }) => c.type === "MetricsReady");
  };
  const reportUsage = async (name: string, usage: Record<string, number>) => {
    const reply = await client.send("PATCH", `${API}/namespaces/p-shop/virtualclusterinstances/${name}/status`, {
      token: admin,
      body: { status: { usage } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 200, reply.body);
  };

  before(async () => {
    platform = await startPlatformProcess({ extraArgs: ["--prometheus-binary", PROMETHEUS] });
    client = new AuthClient(platform.url, platform.caPem);
    admin = platform.adminKey;
    const project = await client.send("POST", `${API}/projects`, {
      token: admin,
      body: { apiVersion: V1, kind: "Project", metadata: { name: "shop" }, spec: {} },
    });
    assert.equal(project.status, 201, project.body);
    // db names a cluster, as an external instance may: it says where it runs, but the platform does not run it there,
    // so its usage is not that cluster's (nor left out as counted by that cluster's own Prometheus).
    for (const [name, spec] of [
      ["web", { external: true }],
      ["db", { external: true, clusterRef: { cluster: "elsewhere" } }],
    ] as const) {
      const created = await client.send("POST", `${API}/namespaces/p-shop/virtualclusterinstances`, {
        token: admin,
        body: { apiVersion: V1, kind: "VirtualClusterInstance", metadata: { name }, spec },
      });
      assert.equal(created.status, 201, created.body);
    }
  });
  after(async () => {
    client?.close();
    await platform?.stop();
  });

  it("the Cost report is refused while costControl is off", async () => {
    const reply = await client.send("GET", "/platform/cost", { token: admin });
    assert.equal(reply.status, 503);
    assert.match(reply.json().message, /cost control is off/);
  });

  it("enabling it runs Prometheus with the Config's retention, size and scrape interval", async () => {
    await writeCost({
      enabled: true,
      global: { metrics: { retention: "2d", scrapeInterval: "1s", storage: { size: "100Mi" } } },
      prices: { cpuCoreHour: 2, memoryGiBHour: 0.5, storageGiBMonth: 3, millionApiRequests: 1000 },
    });
    await waitFor(async () => (await condition())?.status === "True", "MetricsReady", 120);
    const message = (await condition()).message as string;
    prometheusUrl = /runs at (http:\/\/127\.0\.0\.1:\d+)/.exec(message)?.[1] ?? "";
    assert.ok(prometheusUrl, message);
    const flags = (
      (await (await fetch(`${prometheusUrl}/api/v1/status/flags`)).json()) as { data: Record<string, string> }
    ).data;
    assert.equal(flags["storage.tsdb.retention.time"], "2d");
    assert.equal(flags["storage.tsdb.retention.size"], "100MiB", "100Mi, as Prometheus prints it");
    await waitFor(async () => {
      const answer = (await (await fetch(`${prometheusUrl}/api/v1/targets`)).json()) as {
        data: { activeTargets: { labels: { job: string }; health: string }[] };
      };
      const targets = answer.data.activeTargets;
      return targets.some(
        (t: { labels: { job: string }; health: string }) => t.labels.job === "platform" && t.health === "up",
      );
    }, "the platform scraped");
  });

  it("the platform's /metrics has usage labelled by project, cluster and virtual cluster", async () => {
    await reportUsage("web", {
      cpuSeconds: 100,
      residentMemoryBytes: 2 * 1024 ** 3,
      syncedObjects: 5,
      apiRequests: 1000,
      storageBytes: 1024 ** 3,
    });
    await reportUsage("db", {
      cpuSeconds: 10,
      residentMemoryBytes: 1024 ** 3,
      syncedObjects: 1,
      apiRequests: 10,
      storageBytes: 4 * 1024 ** 3,
    });
    const text = (await client.send("GET", "/metrics", { token: admin, accept: "text/plain" })).body;
    assert.match(
      text,
      /vcp_usage_cpu_seconds_total\{project="shop",cluster="",virtualcluster="web",component="virtualcluster"\} 100/,
    );
    assert.match(
      text,
      /vcp_usage_storage_bytes\{project="shop",cluster="",virtualcluster="db",component="virtualcluster"\} 4294967296/,
    );
    assert.match(
      text,
      /vcp_usage_cpu_seconds_total\{project="",cluster="",virtualcluster="",component="platform"\} [\d.]+/,
    );
  });

  it("known load shows in the Cost report as PromQL answers it, priced by the Config", async () => {
    // The runtimes' counters grow: web uses 3600 CPU seconds (one core-hour) and serves 2000 requests more.
    await waitFor(async () => {
      const got = await promql(
        prometheusUrl,
        'vcp_usage_cpu_seconds_total{virtualcluster="web"}',
        new Date().toISOString(),
      );
      return got[0]?.value === 100;
    }, "the first sample in Prometheus");
    await reportUsage("web", {
      cpuSeconds: 3700,
      residentMemoryBytes: 2 * 1024 ** 3,
      syncedObjects: 5,
      apiRequests: 3000,
      storageBytes: 1024 ** 3,
    });
    await waitFor(async () => {
      const got = await promql(
        prometheusUrl,
        'vcp_usage_cpu_seconds_total{virtualcluster="web"}',
        new Date().toISOString(),
      );
      return got[0]?.value === 3700;
    }, "the grown counter in Prometheus");
    const end = new Date().toISOString();
    const start = new Date(Date.now() - 5 * 60_000).toISOString();
    const reply = await client.send("GET", `/platform/cost?start=${start}&end=${end}`, { token: admin });
    assert.equal(reply.status, 200, reply.body);
    const report = reply.json() as { rows: Row[]; queries: Record<string, string>; total: number };
    const web = report.rows.find((r) => r.virtualcluster === "web");
    const db = report.rows.find((r) => r.virtualcluster === "db");
    assert.ok(web && db, JSON.stringify(report.rows));
    // Every figure is Prometheus's own answer to the query the report names.
    const answer = async (query: string, name: string) =>
      (await promql(prometheusUrl, query, end)).find((s) => s.metric.virtualcluster === name)?.value ?? 0;
    const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));
    assert.ok(close(web.cpuCoreHours, (await answer(report.queries.cpu, "web")) / 3600), `${web.cpuCoreHours}`);
    assert.ok(web.cpuCoreHours >= 1, "one core-hour at least (increase() extrapolates to the range)");
    assert.equal(web.apiRequests, Math.round(await answer(report.queries.requests, "web")));
    assert.ok(close(db.memoryGiBHours, (await answer(report.queries.memory, "db")) / 1024 ** 3 / 3600));
    // 1 GiB for as long as db existed in the range: one scrape interval (1 s) per sample, not the whole 5 minutes.
    const samples = await answer('count_over_time(vcp_usage_resident_memory_bytes{virtualcluster="db"}[300s])', "db");
    assert.ok(samples > 0 && samples < 300, `${samples} samples`);
    assert.ok(close(db.memoryGiBHours, samples / 3600), `1 GiB for ${samples} s: ${db.memoryGiBHours}`);
    const expected =
      web.cpuCoreHours * 2 + web.memoryGiBHours * 0.5 + web.storageGiBMonths * 3 + (web.apiRequests / 1e6) * 1000;
    assert.ok(close(web.cost, expected), `${web.cost} vs ${expected}`);
  });

  it("global.metrics is held to one Prometheus process: replicas 2 is refused with the reason", async () => {
    const reply = await client.send("PATCH", CONFIG, {
      token: admin,
      body: { spec: { raw: "costControl: {enabled: true, global: {metrics: {replicas: 2}}}\n" } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(reply.status, 422, reply.body);
    assert.match(reply.json().message, /costControl\.global\.metrics\.replicas: Invalid value: 2: must be 0 or 1/);
    assert.equal((await condition())?.status, "True", "nothing stored: the running Prometheus stays");
  });

  it("global.metrics.replicas 0 stops the platform's Prometheus, and the Cost page says why", async () => {
    await writeCost({ enabled: true, global: { metrics: { replicas: 0 } } });
    await waitFor(async () => (await condition())?.reason === "ReplicasZero", "MetricsReady ReplicasZero", 120);
    assert.equal((await condition()).status, "False");
    await waitFor(async () => !(await prometheusPid(prometheusUrl)), "the platform's prometheus stopped");
    const reply = await client.send("GET", "/platform/cost", { token: admin });
    assert.equal(reply.status, 503);
    assert.match(reply.json().message, /replicas is 0: the platform runs no Prometheus/);
  });

  it('replicas 1 runs it again with GOMEMLIMIT, GOMAXPROCS and, for storageClass "-", a temporary TSDB', async () => {
    await writeCost({
      enabled: true,
      global: {
        metrics: {
          scrapeInterval: "1s",
          storage: { storageClass: "-" },
          resources: { limits: { memory: "1Gi", cpu: "1" }, requests: { memory: "1Mi" } },
        },
      },
    });
    await waitFor(async () => (await condition())?.status === "True", "MetricsReady again", 120);
    const message = (await condition()).message as string;
    assert.match(message, /memory limit 1Gi, cpu limit 1, temporary storage/);
    prometheusUrl = /runs at (http:\/\/127\.0\.0\.1:\d+)/.exec(message)?.[1] ?? "";
    const pid = await prometheusPid(prometheusUrl);
    assert.ok(pid, prometheusUrl);
    const env = await environOf(pid);
    assert.equal(env.GOMEMLIMIT, String(Math.floor(2 ** 30 * 0.9)));
    assert.equal(env.GOMAXPROCS, "1");
    const flags = (
      (await (await fetch(`${prometheusUrl}/api/v1/status/flags`)).json()) as { data: Record<string, string> }
    ).data;
    assert.ok(flags["storage.tsdb.path"].startsWith(join(tmpdir(), "vcp-prometheus-")), flags["storage.tsdb.path"]);
    temporaryTsdb = flags["storage.tsdb.path"];
  });

  it("only admins and viewers read the Cost report", async () => {
    await client.createUser(admin, "member");
    const key = await client.createKey(admin, "key-member", { user: "member" });
    assert.equal((await client.send("GET", "/platform/cost", { token: key })).status, 403);
  });

  it("turning it off stops the Prometheus it started", async () => {
    await writeCost({ enabled: false });
    await waitFor(async () => (await condition()) === undefined, "MetricsReady removed");
    await waitFor(
      async () =>
        !(await fetch(`${prometheusUrl}/-/ready`).then(
          () => true,
          () => false,
        )),
      "prometheus stopped",
    );
    assert.equal((await client.send("GET", "/platform/cost", { token: admin })).status, 503);
    assert.equal(existsSync(temporaryTsdb), false, "the temporary TSDB went with it");
    const keys = (await client.send("GET", `${API}/ownedaccesskeys`, { token: admin })).json();
    assert.ok(
      !keys.items.some((k: { metadata: { name: string } }) => k.metadata.name.startsWith("prometheus-scrape-")),
    );
  });
});
