// The Prometheus the platform runs for cost control (Debian's `prometheus`, or --prometheus-binary): a child process
// listening on loopback, its TSDB in <data-dir>/prometheus, retention time and size from the Config, scraping the
// targets it is given (the platform's /metrics over HTTPS with a scrape-only key, and every connected cluster's
// agent through the platform). Stopping it ends the process; its data stays for the next start, unless the
// storageClass asked for none ("-" or ""): then the TSDB is a temporary directory, deleted when the process ends.
// Resource limits and requests apply as prometheus-limits.ts says (GOMEMLIMIT, GOMAXPROCS, a hard memory limit
// checked every MEMORY_CHECK_MS, requests against the machine).

import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { stringify } from "yaml";
import { parseByteSize } from "../utils/byte-size.ts";
import {
  anonymousRssBytes,
  insufficientResources,
  memoryLimitBytes,
  type ProcessResources,
  prometheusEnv,
} from "./prometheus-limits.ts";

/** How often the hard memory limit is checked. */
const MEMORY_CHECK_MS = 2_000;

export interface ScrapeTarget {
  job: string;
  /** https://host:port */
  address: string;
  metricsPath: string;
  /** CA of the target's certificate (PEM file). */
  caFile?: string;
  /** A file holding the bearer token. */
  tokenFile?: string;
  /** Fixed labels for every series of the target (cluster for an agent). */
  labels?: Record<string, string>;
  /** Labels set on every scraped series, over what the target sent (metric_relabel_configs). */
  setLabels?: Record<string, string>;
  /** URL parameters of the scrape (federation's match[]). */
  params?: Record<string, string[]>;
  /**
   * Whether the labels in the target's answer win over the scrape's own (job, instance, `labels`): Prometheus's
   * honor_labels, default true. False for a target that answers for others (a connected cluster's federation): the
   * scrape's win, and the answer's are kept as exported_job, exported_instance and so on.
   */
  honorLabels?: boolean;
}

export interface PrometheusRunOptions extends ProcessResources {
  binary: string;
  /** Its own folder (TSDB, config file). */
  dir: string;
  /** Prometheus duration ("1y"). */
  retention: string;
  /** A Kubernetes quantity ("10Gi"); empty: no size limit. */
  retentionSize: string;
  scrapeInterval: string;
  targets: ScrapeTarget[];
  logger?: Logger;
  /** How long to wait for /-/ready (default 60 s). */
  startTimeoutMs?: number;
  /** storage.storageClass: "-" or "" keeps the TSDB in a temporary directory; undefined: <dir>/data. */
  storageClass?: string;
}

/** A quantity as Prometheus's --storage.tsdb.retention.size takes it (bytes with the B unit). */
export function prometheusSize(quantity: string): string | undefined {
  const bytes = parseByteSize(quantity);
  return bytes === undefined || bytes === 0 ? undefined : `${bytes}B`;
}

/** The prometheus.yml for the targets. */
export function prometheusConfig(options: Pick<PrometheusRunOptions, "scrapeInterval" | "targets">): string {
  return stringify({
    global: { scrape_interval: options.scrapeInterval, evaluation_interval: options.scrapeInterval },
    scrape_configs: options.targets.map((target) => {
      const url = new URL(target.address);
      return {
        job_name: target.job,
        scheme: url.protocol.replace(":", ""),
        metrics_path: target.metricsPath,
        ...(target.caFile ? { tls_config: { ca_file: target.caFile } } : {}),
        ...(target.tokenFile ? { authorization: { type: "Bearer", credentials_file: target.tokenFile } } : {}),
        ...(target.params ? { params: target.params } : {}),
        ...(target.setLabels
          ? {
              metric_relabel_configs: Object.entries(target.setLabels).map(([label, value]) => ({
                target_label: label,
                replacement: value,
              })),
            }
          : {}),
        // Our own series carry their project, cluster and virtual cluster: keep them as the target sent them (a
        // connected cluster's federation, honorLabels false, does not name its own job and instance).
        honor_labels: target.honorLabels ?? true,
        static_configs: [{ targets: [url.host], ...(target.labels ? { labels: target.labels } : {}) }],
      };
    }),
  });
}

/** The settings as the MetricsReady condition shows them. */
export function describeSettings(
  settings: Pick<PrometheusRunOptions, "retention" | "scrapeInterval" | "memoryLimit" | "cpuLimit" | "storageClass"> & {
    storageSize: string;
  },
): string {
  const parts = [`retention ${settings.retention}${settings.storageSize ? `, at most ${settings.storageSize}` : ""}`];
  parts.push(`scrape every ${settings.scrapeInterval}`);
  if (settings.memoryLimit) parts.push(`memory limit ${settings.memoryLimit}`);
  if (settings.cpuLimit) parts.push(`cpu limit ${settings.cpuLimit}`);
  if (settings.storageClass !== undefined) parts.push("temporary storage");
  return parts.join(", ");
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Prometheus did not start because of its resources (requests the machine cannot meet, or the memory limit). */
export class ResourceLimitError extends Error {}

export class PrometheusProcess {
  readonly url: string;
  /** Where its TSDB is (a temporary directory when storageClass asked for no persistent storage). */
  readonly dataDir: string;
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  private readonly configFile: string;
  private memoryGuard?: NodeJS.Timeout;
  private oomKilled?: string;

  private constructor(url: string, child: ChildProcess, configFile: string, data: { dir: string; temporary: boolean }) {
    this.url = url;
    this.child = child;
    this.configFile = configFile;
    this.dataDir = data.dir;
    this.exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    }).then(async () => {
      clearInterval(this.memoryGuard);
      if (data.temporary) await rm(data.dir, { recursive: true, force: true });
    });
  }

  /** Kills it, as the OOM killer would, once its anonymous resident memory passes `limit` bytes. */
  private guardMemory(limit: number): void {
    const check = async () => {
      const pid = this.child.pid;
      const rss = pid && this.running ? await anonymousRssBytes(pid) : undefined;
      if (rss === undefined || rss <= limit || !this.running) return;
      this.oomKilled = `killed for exceeding its memory limit of ${limit} bytes (anonymous resident memory ${rss} bytes)`;
      this.child.kill("SIGKILL");
    };
    void check();
    this.memoryGuard = setInterval(() => void check(), MEMORY_CHECK_MS);
    this.memoryGuard.unref();
  }

  /** Why it is no longer running (undefined while it runs). */
  get exitReason(): string | undefined {
    if (this.running) return undefined;
    return this.oomKilled ?? `exited (code ${this.child.exitCode}, signal ${this.child.signalCode})`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  static async start(options: PrometheusRunOptions): Promise<PrometheusProcess> {
    const insufficient = insufficientResources(options);
    if (insufficient) throw new ResourceLimitError(insufficient);
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    const temporary = options.storageClass !== undefined;
    const data = temporary ? await mkdtemp(join(tmpdir(), "vcp-prometheus-")) : join(options.dir, "data");
    await mkdir(data, { recursive: true, mode: 0o700 });
    const configFile = join(options.dir, "prometheus.yml");
    await writeFile(configFile, prometheusConfig(options), { mode: 0o600 });
    const port = await freePort();
    const size = prometheusSize(options.retentionSize);
    const args = [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${data}`,
      `--storage.tsdb.retention.time=${options.retention}`,
      ...(size ? [`--storage.tsdb.retention.size=${size}`] : []),
      `--web.listen-address=127.0.0.1:${port}`,
      "--web.enable-lifecycle",
      "--log.level=warn",
    ];
    const child = spawn(options.binary, args, { stdio: ["ignore", "ignore", "pipe"], env: prometheusEnv(options) });
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    const failed = new Promise<never>((_, reject) => {
      child.once("error", (error) => reject(new Error(`cannot run ${options.binary}: ${error.message}`)));
      child.once("exit", (code) =>
        reject(
          process.oomKilled
            ? new ResourceLimitError(`${options.binary} was ${process.oomKilled} while starting`)
            : new Error(`${options.binary} exited with ${code} at start: ${stderr.trim().split("\n").at(-1) ?? ""}`),
        ),
      );
    });
    failed.catch(() => undefined);
    const process = new PrometheusProcess(`http://127.0.0.1:${port}`, child, configFile, { dir: data, temporary });
    const limit = memoryLimitBytes(options);
    if (limit) process.guardMemory(limit);
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      const ready = await fetch(`${process.url}/-/ready`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) {
        child.stderr?.removeAllListeners("data");
        child.stderr?.on("data", (chunk) => options.logger?.warn({ prometheus: String(chunk).trim() }, "prometheus"));
        return process;
      }
      await Promise.race([failed, new Promise((resolve) => setTimeout(resolve, 200))]);
    }
    await process.stop();
    throw new Error(`${options.binary} was not ready in time`);
  }

  /** New targets or interval: rewrites the config and asks Prometheus to reload it. */
  async reconfigure(options: Pick<PrometheusRunOptions, "scrapeInterval" | "targets">): Promise<void> {
    await writeFile(this.configFile, prometheusConfig(options), { mode: 0o600 });
    const response = await fetch(`${this.url}/-/reload`, { method: "POST" });
    if (!response.ok) throw new Error(`prometheus refused the new configuration (${response.status})`);
  }

  async stop(): Promise<void> {
    if (this.running) this.child.kill("SIGTERM");
    const killer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(killer);
  }
}
