// 8. What the Config's background systems cost an otherwise idle platform (issue 35), CPU read from /proc in one
// run on one platform, each window as long as the others:
//   idle     nothing enabled: the platform's own timers (the baseline of this scenario);
//   scrape   costControl on with a 1 s scrape interval: the platform serves /metrics (usage series of
//            --instances virtual clusters) to the Prometheus it runs; Prometheus's own CPU is shown apart;
//   catalog  apps with one chart repository of 200 charts x 10 versions and a 1 s refresh interval: the platform
//            fetches, parses and indexes index.yaml every second (the repository runs in this process; its
//            `generated` time changes on every read, as a repository being published to);
//   unchanged the same with a second repository whose index never changes: fetched and hashed, not parsed again.
// Cost per scrape and per refresh = (window CPU - idle CPU) / scrapes or refreshes in the window.

import { readdirSync, readFileSync } from "node:fs";
import { get } from "node:https";
import { startHelmRepoServer } from "../../test/support/helm-repo-server.ts";
import { GROUP_VERSION } from "../lib/api.ts";
import { startBenchPlatform } from "../lib/platform.ts";
import { cpuTimeMs, memoryStatus } from "../lib/proc.ts";
import type { Scenario } from "../lib/scenario.ts";
import { formatInt, formatMiB, round } from "../lib/stats.ts";

const INSTANCES = 100;
const CHARTS = 200;
const VERSIONS = 10;
const CONFIG = `/apis/${GROUP_VERSION}/configs/platform-config`;
const MERGE = "application/merge-patch+json";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pid of the platform's child named `name`, if it runs one. */
function childNamed(parent: number, name: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === parent && command === name) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** CPU milliseconds each process used over `seconds`. */
async function window(seconds: number, pids: Record<string, number | undefined>): Promise<Record<string, number>> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid ? cpuTimeMs(pid) : 0]));
  await sleep(seconds * 1000);
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid ? cpuTimeMs(pid) - before[name] : 0]));
}

export const configSystemsScenario: Scenario = {
  name: "config-systems",
  title: "Config systems: metrics scrape and chart catalog refresh against the idle platform",
  async run(context) {
    const seconds = Math.max(10, context.duration * 2);
    const platform = await startBenchPlatform();
    const charts = Array.from({ length: CHARTS * VERSIONS }, (_, i) => ({
      name: `chart-${Math.floor(i / VERSIONS)}`,
      version: `1.${i % VERSIONS}.0`,
      description: "A chart of the benchmark repository, with a description of ordinary length.",
    }));
    const repo = await startHelmRepoServer({ charts });
    const still = await startHelmRepoServer({ charts, generated: "2026-01-01T00:00:00Z" });
    try {
      const api = platform.api;
      await api.expect(201, "POST", `/apis/${GROUP_VERSION}/projects`, {
        apiVersion: GROUP_VERSION,
        kind: "Project",
        metadata: { name: "bench" },
        spec: {},
      });
      for (let i = 0; i < INSTANCES; i++) {
        const path = `/apis/${GROUP_VERSION}/namespaces/p-bench/virtualclusterinstances`;
        const name = `vc-${i}`;
        const body = { apiVersion: GROUP_VERSION, kind: "VirtualClusterInstance", metadata: { name } };
        await api.expect(201, "POST", path, { ...body, spec: { external: true } });
        const usage = { cpuSeconds: i, residentMemoryBytes: 1e8, syncedObjects: 10, apiRequests: i, storageBytes: 1e7 };
        await api.expect(200, "PATCH", `${path}/${name}/status`, { status: { usage } }, MERGE);
      }
      const metricsBytes = (await api.request("GET", "/metrics")).body.length;
      await sleep(2000);
      context.log(`idle window (${seconds} s)`);
      const idle = await window(seconds, { platform: platform.pid });

      const raw = `costControl: ${JSON.stringify({ enabled: true, global: { metrics: { scrapeInterval: "1s" } } })}\n`;
      await api.expect(200, "PATCH", CONFIG, { spec: { raw } }, MERGE);
      let prometheusUrl = "";
      for (let waited = 0; !prometheusUrl && waited < 600; waited++) {
        const config = await api.expect<{
          status: { conditions?: { type: string; status: string; message: string }[] };
        }>(200, "GET", CONFIG);
        const ready = config.status.conditions?.find((c) => c.type === "MetricsReady" && c.status === "True");
        prometheusUrl = /runs at (http:\/\/127\.0\.0\.1:\d+)/.exec(ready?.message ?? "")?.[1] ?? "";
        if (!prometheusUrl) await sleep(500);
      }
      if (!prometheusUrl) throw new Error("Prometheus did not become ready");
      const prometheus = childNamed(platform.pid, "prometheus");
      await sleep(5000); // Prometheus's start-up (WAL, first compaction) out of the window
      context.log(`scrape window (${seconds} s)`);
      const scrape = await window(seconds, { platform: platform.pid, prometheus });
      const scrapes = await platformScrapes(prometheusUrl, seconds);
      const prometheusRss = prometheus ? memoryStatus(prometheus).vmRssKiB : Number.NaN;
      await api.expect(200, "PATCH", CONFIG, { spec: { raw: "costControl:\n  enabled: false\n" } }, MERGE);
      await sleep(3000);

      const apps = {
        refreshInterval: "1s",
        repositories: [{ name: "bench", url: repo.url, insecure: true }],
      };
      await api.expect(200, "PATCH", CONFIG, { spec: { raw: `apps: ${JSON.stringify(apps)}\n` } }, MERGE);
      const indexReads = () => repo.requests.filter((r) => r.path === "/index.yaml").length;
      for (let waited = 0; indexReads() === 0 && waited < 600; waited++) await sleep(500);
      await sleep(3000);
      const indexBytes = await indexSize(repo.url, repo.caPem);
      const readsBefore = indexReads();
      context.log(`catalog window (${seconds} s)`);
      const catalog = await window(seconds, { platform: platform.pid });
      const refreshes = indexReads() - readsBefore;

      const unchangedApps = {
        refreshInterval: "1s",
        repositories: [{ name: "still", url: still.url, insecure: true }],
      };
      await api.expect(200, "PATCH", CONFIG, { spec: { raw: `apps: ${JSON.stringify(unchangedApps)}\n` } }, MERGE);
      const stillReads = () => still.requests.filter((r) => r.path === "/index.yaml").length;
      for (let waited = 0; stillReads() === 0 && waited < 600; waited++) await sleep(500);
      await sleep(3000);
      const stillBefore = stillReads();
      context.log(`unchanged catalog window (${seconds} s)`);
      const unchanged = await window(seconds, { platform: platform.pid });
      const unchangedRefreshes = stillReads() - stillBefore;
      const perUnchanged = (unchanged.platform - idle.platform) / Math.max(1, unchangedRefreshes);

      const perScrape = (scrape.platform - idle.platform) / Math.max(1, scrapes);
      const perRefresh = (catalog.platform - idle.platform) / Math.max(1, refreshes);
      const cores = (ms: number) => `${round(ms / 1000 / seconds, 3)}`;
      return {
        name: "config-systems",
        title: this.title,
        tables: [
          {
            columns: [
              "window",
              "seconds",
              "platform CPU (cores)",
              "other process CPU (cores)",
              "events",
              "platform CPU per event",
            ],
            rows: [
              ["idle (nothing enabled)", String(seconds), cores(idle.platform), "-", "-", "-"],
              [
                `costControl, scrape every 1 s (${INSTANCES} virtual clusters, /metrics ${formatInt(metricsBytes)} bytes)`,
                String(seconds),
                cores(scrape.platform),
                `Prometheus ${cores(scrape.prometheus)}`,
                `${scrapes} scrapes`,
                `${perScrape.toFixed(2)} ms`,
              ],
              [
                `apps, refresh every 1 s (${CHARTS} charts x ${VERSIONS} versions, index.yaml ${formatInt(indexBytes)} bytes)`,
                String(seconds),
                cores(catalog.platform),
                "-",
                `${refreshes} refreshes`,
                `${perRefresh.toFixed(2)} ms`,
              ],
              [
                "apps, refresh every 1 s, the same index.yaml unchanged (fetched and hashed, not parsed)",
                String(seconds),
                cores(unchanged.platform),
                "-",
                `${unchangedRefreshes} refreshes`,
                `${perUnchanged.toFixed(2)} ms`,
              ],
            ],
          },
        ],
        goals: [],
        notes: [`Prometheus resident memory after the scrape window: ${formatMiB(prometheusRss)}`],
        data: {
          seconds,
          instances: INSTANCES,
          charts: CHARTS * VERSIONS,
          metricsBytes,
          indexBytes,
          cpuMs: { idle, scrape, catalog, unchanged },
          scrapes,
          refreshes,
          unchangedRefreshes,
          platformMsPerUnchangedRefresh: round(perUnchanged, 3),
          platformMsPerScrape: round(perScrape, 3),
          platformMsPerRefresh: round(perRefresh, 3),
          prometheusRssKiB: prometheusRss,
        },
      };
    } finally {
      await repo.close();
      await still.close();
      await platform.stop();
    }
  },
};

/** Scrapes of the platform in the last `seconds` (one `up` sample each). */
async function platformScrapes(prometheusUrl: string, seconds: number): Promise<number> {
  const url = new URL("/api/v1/query", prometheusUrl);
  url.searchParams.set("query", `sum(count_over_time(up{job="platform"}[${seconds}s]))`);
  const body = (await (await fetch(url)).json()) as { data: { result: { value: [number, string] }[] } };
  return Number(body.data.result[0]?.value[1] ?? 0);
}

/** The size of the repository's index.yaml. */
function indexSize(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(`${url}/index.yaml`, { ca }, (response) => {
      let bytes = 0;
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      response.on("end", () => resolve(bytes));
    }).on("error", reject);
  });
}
