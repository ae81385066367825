// The metrics Prometheus of a connected cluster (cost control's `cluster.metrics`, the Cluster's spec.costControl
// over the Config's defaults): while the platform has cost control on, the agent runs Debian's `prometheus`
// (`--prometheus-binary`, default `prometheus` on PATH) on loopback with the cluster's retention, storage size and
// scrape interval, its TSDB in <data-dir>/prometheus, scraping the agent's own usage (a loopback listener serving
// `vcp_usage_*{component="agent"}`) and every virtual cluster it runs (their /metrics with their admin token), each
// series labelled with the cluster. The platform's Prometheus federates it through the tunnel
// (`/platform/clusters/<name>/federate`). The settings are kept on disk, so a restarted agent starts it again
// without the platform; turning cost control off (or deleting the cluster) stops it. Without a prometheus binary it
// reports Failed and the platform keeps counting the cluster from the agent's heartbeats.
// The runner (with the YAML library it writes Prometheus's configuration with) and prom-client load when the metrics
// first start: most agents never run them, and the two cost an idle agent about 10 MiB resident.

import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";
import type { ClusterMetricsSettings, ClusterMetricsState } from "../http/tunnel/agent-api.ts";
import { processUsage } from "../metrics/process-usage.ts";
import type { PrometheusProcess, ScrapeTarget } from "../metrics/prometheus-runner.ts";
import { http } from "../utils/node-http.ts";

const loadRunner = () => import("../metrics/prometheus-runner.ts");
const loadSeries = () => Promise.all([import("../http/prometheus.ts"), import("../metrics/usage.ts")]);

const REFRESH_MS = 10_000;
const FEDERATE_TIMEOUT_MS = 20_000;

export interface VirtualClusterScrape {
  uid: string;
  project: string;
  name: string;
  url: string;
  caFile: string;
  tokenFile: string;
}

export interface ClusterPrometheusOptions {
  cluster: string;
  /** <agent data dir>/prometheus */
  dir: string;
  /** --prometheus-binary (default `prometheus` on PATH). */
  binary?: string;
  /** The virtual clusters running here, read at every refresh. */
  virtualClusters(): VirtualClusterScrape[];
  /** Requests the agent forwarded to its host since it started. */
  apiRequests(): number;
  logger?: Logger;
}

export class ClusterPrometheus {
  readonly #options: ClusterPrometheusOptions;
  #running?: { process: PrometheusProcess; settings: string; targets: string };
  #usage?: Server;
  #refresh?: NodeJS.Timeout;
  #queue: Promise<unknown> = Promise.resolve();
  #state: ClusterMetricsState = { phase: "Off" };
  /** How often, and why last, its Prometheus ended on its own (the memory limit's kill included). */
  #restarts = 0;
  #lastExit?: string;

  constructor(options: ClusterPrometheusOptions) {
    this.#options = options;
  }

  get #settingsFile(): string {
    return join(this.#options.dir, "settings.json");
  }

  /** The state the platform last asked for, as of now. */
  state(): ClusterMetricsState {
    return { ...this.#state };
  }

  /** The pid of its Prometheus (benchmarks, tests). */
  get pid(): number | undefined {
    return this.#running?.process.pid;
  }

  /** Starts it again when the platform had it on before the agent restarted. */
  async load(): Promise<void> {
    if (!existsSync(this.#settingsFile)) return;
    const settings = JSON.parse(await readFile(this.#settingsFile, "utf8")) as ClusterMetricsSettings;
    await this.put(settings);
  }

  put(settings: ClusterMetricsSettings): Promise<ClusterMetricsState> {
    return this.#serial(() => this.#apply(settings));
  }

  delete(): Promise<ClusterMetricsState> {
    return this.#serial(async () => {
      await this.#stop();
      await rm(this.#settingsFile, { force: true });
      this.#state = { phase: "Off" };
      this.#restarts = 0;
      this.#lastExit = undefined;
      return this.state();
    });
  }

  /** Its Prometheus's federation answer (text exposition) for the match[] selectors. */
  async federate(matches: string[]): Promise<string> {
    const running = this.#running;
    if (!running) throw new Error("the cluster's metrics Prometheus is not running");
    const url = new URL("/federate", running.process.url);
    for (const match of matches) url.searchParams.append("match[]", match);
    const response = await fetch(url, { signal: AbortSignal.timeout(FEDERATE_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`prometheus answered /federate with ${response.status}`);
    return response.text();
  }

  async close(): Promise<void> {
    await this.#serial(() => this.#stop());
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #apply(settings: ClusterMetricsSettings): Promise<ClusterMetricsState> {
    await mkdir(this.#options.dir, { recursive: true, mode: 0o700 });
    await writeFile(this.#settingsFile, `${JSON.stringify(settings)}\n`, { mode: 0o600 });
    const signature = JSON.stringify(settings);
    if (this.#running?.settings === signature && this.#running.process.running) {
      await this.#reconfigure(settings);
      return this.state();
    }
    if (this.#running?.settings !== signature) {
      this.#restarts = 0;
      this.#lastExit = undefined;
    }
    await this.#stop();
    const { describeSettings, PrometheusProcess, ResourceLimitError } = await loadRunner();
    try {
      const targets = await this.#targets();
      const process = await PrometheusProcess.start({
        binary: this.#options.binary ?? "prometheus",
        dir: this.#options.dir,
        retention: settings.retention,
        retentionSize: settings.storageSize,
        scrapeInterval: settings.scrapeInterval,
        memoryLimit: settings.memoryLimit,
        cpuLimit: settings.cpuLimit,
        memoryRequest: settings.memoryRequest,
        cpuRequest: settings.cpuRequest,
        storageClass: settings.storageClass,
        targets,
        logger: this.#options.logger,
      });
      this.#running = { process, settings: signature, targets: JSON.stringify(targets) };
      this.#refresh = setInterval(() => void this.#serial(() => this.#reconfigure(settings)), REFRESH_MS);
      this.#refresh.unref();
      this.#state = { phase: "Running", message: `prometheus on the agent's machine (${describeSettings(settings)})` };
      if (this.#lastExit) this.#state.message += `; restarted ${this.#restarts} times, last ${this.#lastExit}`;
      this.#options.logger?.info(
        { url: process.url, retention: settings.retention },
        "cluster metrics prometheus started",
      );
    } catch (error) {
      await this.#stopUsage();
      const reason = (error as Error).message;
      const hint =
        error instanceof ResourceLimitError
          ? ""
          : ": install Debian's prometheus on the agent's machine or give the agent --prometheus-binary";
      this.#state = {
        phase: "Failed",
        message: `${reason}${hint}; until then the platform counts this cluster from the agent's heartbeats`,
      };
      this.#options.logger?.warn({ reason: this.#state.message }, "cluster metrics prometheus did not start");
    }
    return this.state();
  }

  /** New virtual clusters (or gone ones): Prometheus reloads its targets. One that ended is started again. */
  async #reconfigure(settings: ClusterMetricsSettings): Promise<void> {
    const running = this.#running;
    if (!running) return;
    if (!running.process.running) {
      this.#restarts++;
      this.#lastExit = running.process.exitReason;
      this.#options.logger?.warn({ reason: this.#lastExit }, "cluster metrics prometheus ended; starting it again");
      await this.#apply(settings);
      return;
    }
    const targets = await this.#targets();
    const signature = JSON.stringify(targets);
    if (signature === running.targets) return;
    await running.process
      .reconfigure({ scrapeInterval: settings.scrapeInterval, targets })
      .then(() => {
        running.targets = signature;
      })
      .catch((error) => this.#options.logger?.warn({ err: String(error) }, "reloading prometheus failed"));
  }

  async #targets(): Promise<ScrapeTarget[]> {
    const cluster = { cluster: this.#options.cluster };
    const agent: ScrapeTarget = {
      job: "agent",
      address: await this.#usageUrl(),
      metricsPath: "/metrics",
      setLabels: { ...cluster, project: "", virtualcluster: "", component: "agent" },
    };
    const virtualClusters = this.#options.virtualClusters().map(
      (vc): ScrapeTarget => ({
        job: `virtualcluster-${vc.uid}`,
        address: vc.url,
        metricsPath: "/metrics",
        caFile: vc.caFile,
        tokenFile: vc.tokenFile,
        setLabels: { ...cluster, project: vc.project, virtualcluster: vc.name, component: "virtualcluster" },
      }),
    );
    return [agent, ...virtualClusters];
  }

  /** The agent's own usage series on a loopback listener (started with Prometheus). */
  async #usageUrl(): Promise<string> {
    if (!this.#usage) {
      const [{ Registry }, { registerUsageMetrics }] = await loadSeries();
      const registry = new Registry();
      registerUsageMetrics(registry, () => [
        {
          labels: { project: "", cluster: this.#options.cluster, virtualcluster: "", component: "agent" },
          usage: { ...processUsage(), syncedObjects: 0, apiRequests: this.#options.apiRequests(), storageBytes: 0 },
        },
      ]);
      const server = http.createServer((request, response) => {
        if (request.url !== "/metrics") {
          response.writeHead(404).end();
          return;
        }
        registry.metrics().then(
          (text) => response.writeHead(200, { "content-type": registry.contentType }).end(text),
          () => response.writeHead(500).end(),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      this.#usage = server;
    }
    return `http://127.0.0.1:${(this.#usage.address() as AddressInfo).port}`;
  }

  async #stopUsage(): Promise<void> {
    const server = this.#usage;
    this.#usage = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  async #stop(): Promise<void> {
    clearInterval(this.#refresh);
    const running = this.#running;
    this.#running = undefined;
    if (running) {
      await running.process.stop();
      this.#options.logger?.info("cluster metrics prometheus stopped");
    }
    await this.#stopUsage();
  }
}
