// Cost control on the leader (Config costControl.enabled): runs Prometheus (--prometheus-binary, default
// `prometheus` on PATH) with global.metrics' retention, storage size and scrape interval, scraping the platform's
// /metrics with a key that may read only /metrics; or, with --prometheus-url, uses the Prometheus the user runs and
// starts nothing. Turning costControl off stops the Prometheus it started and deletes its key. The Config's
// MetricsReady condition says which, or why not. GET /platform/cost answers the Cost page (admins and viewers,
// like /metrics) from that Prometheus.

import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { errors } from "../../apimachinery/errors.ts";
import { prometheusDurationSeconds } from "../../config/formats.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { CostControlSettings } from "../../config/system-settings.ts";
import { costReport } from "../../metrics/cost-report.ts";
import {
  describeSettings,
  PrometheusProcess,
  ResourceLimitError,
  type ScrapeTarget,
} from "../../metrics/prometheus-runner.ts";
import type { BackgroundTask } from "./background-task.ts";
import type { ConfigStatusWriter } from "./config-status.ts";

const CONDITION = "MetricsReady";
const REPLICAS_ZERO =
  "costControl.global.metrics.replicas is 0: the platform runs no Prometheus (give --prometheus-url to use your own for the Cost page)";
/** How often the extra targets are looked at again (a cluster's metrics started or stopped). */
const TARGETS_CHECK_MS = 10_000;
export const COST_PATH = "/platform/cost";

export interface ScrapeKey {
  name: string;
  key: string;
}

export interface CostControlOptions {
  settings: LiveSettings;
  status: ConfigStatusWriter;
  dataDir: string;
  binary?: string;
  /** --prometheus-url */
  externalUrl?: string;
  /** The platform as Prometheus reaches it, known once the server listens. */
  platform(): { url: string; caPem?: string } | undefined;
  /** A key that may only GET /metrics, and its removal. */
  createScrapeKey(): Promise<ScrapeKey>;
  deleteKey(name: string): Promise<void>;
  /**
   * Extra targets (the connected clusters whose metrics Prometheus runs, federated through the platform), read at
   * every (re)configuration and every TARGETS_CHECK_MS while Prometheus runs.
   */
  extraTargets?(): ScrapeTarget[] | Promise<ScrapeTarget[]>;
  /** The connected clusters whose cost estimator is off (costEstimator.replicas 0), read for every report. */
  unestimatedClusters?(): Promise<string[]>;
  logger?: Logger;
}

export class CostControl {
  private readonly options: CostControlOptions;
  private running?: { process: PrometheusProcess; key: ScrapeKey; signature: string; targets: string };
  /** How often, and why last, the Prometheus it runs ended on its own (the memory limit's kill included). */
  private restarts = 0;
  private lastExit?: string;
  private targetsCheck?: NodeJS.Timeout;
  private queue: Promise<void> = Promise.resolve();
  private unsubscribe?: () => void;

  constructor(options: CostControlOptions) {
    this.options = options;
  }

  /** Where the Cost page's queries go, or undefined when cost control is off (or runs on another replica). */
  prometheusUrl(): string | undefined {
    if (!this.options.settings.current().costControl.enabled) return undefined;
    return this.options.externalUrl ?? this.running?.process.url;
  }

  /** The pid of the Prometheus this replica runs (tests, store-info). */
  get pid(): number | undefined {
    return this.running?.process.pid;
  }

  leaderTask(): BackgroundTask {
    return {
      name: "cost control",
      start: () => {
        this.apply();
        this.unsubscribe = this.options.settings.onChange((next, previous) => {
          if (JSON.stringify(next.costControl) !== JSON.stringify(previous.costControl)) this.apply();
        });
      },
      stop: () => {
        this.unsubscribe?.();
        this.queue = this.queue.then(() => this.stopPrometheus());
      },
    };
  }

  /** Waits for the last (re)configuration. */
  settled(): Promise<void> {
    return this.queue;
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.queue;
    await this.stopPrometheus();
  }

  /** New targets (the platform's address known, a cluster's metrics started or stopped): Prometheus reloads. */
  targetsChanged(): void {
    this.queue = this.queue.then(async () => {
      const running = this.running;
      if (!running) return;
      const settings = this.options.settings.current().costControl;
      if (!running.process.running) {
        this.restarts++;
        this.lastExit = running.process.exitReason;
        this.options.logger?.warn({ reason: this.lastExit }, "prometheus ended; starting it again");
        await this.reconcile(settings);
        return;
      }
      const targets = await this.targets(running.key).catch((error) => {
        this.options.logger?.warn({ err: String(error) }, "reading prometheus's targets failed");
        return undefined;
      });
      if (!targets || JSON.stringify(targets) === running.targets) return;
      await running.process.reconfigure({ scrapeInterval: settings.global.scrapeInterval, targets }).then(
        () => {
          running.targets = JSON.stringify(targets);
        },
        (error) => this.options.logger?.warn({ err: String(error) }, "reloading prometheus failed"),
      );
    });
  }

  private apply(): void {
    this.queue = this.queue.then(() => this.reconcile(this.options.settings.current().costControl));
  }

  private async reconcile(settings: CostControlSettings): Promise<void> {
    try {
      if (!settings.enabled) {
        await this.stopPrometheus();
        await this.options.status.setCondition(CONDITION, undefined);
        return;
      }
      if (this.options.externalUrl) {
        await this.options.status.setCondition(CONDITION, {
          type: CONDITION,
          status: "True",
          reason: "External",
          message: `queries go to ${this.options.externalUrl} (--prometheus-url); scrape the platform's /metrics there`,
        });
        return;
      }
      const { global } = settings;
      if (global.replicas === 0) {
        await this.stopPrometheus();
        await this.options.status.setCondition(CONDITION, {
          type: CONDITION,
          status: "False",
          reason: "ReplicasZero",
          message: REPLICAS_ZERO,
        });
        return;
      }
      const signature = JSON.stringify(global);
      if (this.running?.signature === signature && this.running.process.running) return;
      if (this.running?.signature !== signature) {
        this.restarts = 0;
        this.lastExit = undefined;
      }
      await this.stopPrometheus();
      const key = await this.options.createScrapeKey();
      const dir = join(this.options.dataDir, "prometheus");
      try {
        const targets = await this.targets(key);
        const process = await PrometheusProcess.start({
          binary: this.options.binary ?? "prometheus",
          dir,
          retention: global.retention,
          retentionSize: global.storageSize,
          scrapeInterval: global.scrapeInterval,
          memoryLimit: global.memoryLimit,
          cpuLimit: global.cpuLimit,
          memoryRequest: global.memoryRequest,
          cpuRequest: global.cpuRequest,
          storageClass: global.storageClass,
          targets,
          logger: this.options.logger,
        });
        this.running = { process, key, signature, targets: JSON.stringify(targets) };
        this.targetsCheck = setInterval(() => this.targetsChanged(), TARGETS_CHECK_MS);
        this.targetsCheck.unref();
      } catch (error) {
        await this.options.deleteKey(key.name).catch(() => undefined);
        throw error;
      }
      this.options.logger?.info({ url: this.running.process.url, retention: global.retention }, "prometheus started");
      await this.options.status.setCondition(CONDITION, {
        type: CONDITION,
        status: "True",
        reason: "Running",
        message: `prometheus runs at ${this.running.process.url} (${describeSettings(global)})${this.lastExit ? `; restarted ${this.restarts} times, last ${this.lastExit}` : ""}`,
      });
    } catch (error) {
      this.options.logger?.warn({ err: String(error) }, "cost control could not start prometheus");
      await this.options.status.setCondition(CONDITION, {
        type: CONDITION,
        status: "False",
        reason: "PrometheusFailed",
        message:
          error instanceof ResourceLimitError
            ? `${error.message} (costControl.global.metrics.resources)`
            : `${(error as Error).message}; install Debian's prometheus or give --prometheus-binary or --prometheus-url`,
      });
    }
  }

  private async targets(key: ScrapeKey): Promise<ScrapeTarget[]> {
    const platform = this.options.platform();
    if (!platform) return [];
    const dir = join(this.options.dataDir, "prometheus");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const tokenFile = join(dir, "scrape-token");
    await writeFile(tokenFile, key.key, { mode: 0o600 });
    let caFile: string | undefined;
    if (platform.caPem) {
      caFile = join(dir, "platform-ca.crt");
      await writeFile(caFile, platform.caPem, { mode: 0o600 });
    }
    const own: ScrapeTarget = { job: "platform", address: platform.url, metricsPath: "/metrics", caFile, tokenFile };
    const extra = ((await this.options.extraTargets?.()) ?? []).map((target) => ({
      ...target,
      address: platform.url,
      caFile,
      tokenFile,
    }));
    return [own, ...extra];
  }

  private async stopPrometheus(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    clearInterval(this.targetsCheck);
    await running.process.stop();
    await this.options.deleteKey(running.key.name).catch(() => undefined);
    await rm(join(this.options.dataDir, "prometheus", "scrape-token"), { force: true });
    this.options.logger?.info("prometheus stopped");
  }

  routes(): (app: FastifyInstance) => void {
    return (app) => {
      app.get(COST_PATH, async (request, reply) => {
        const url = this.prometheusUrl();
        if (!url) {
          throw errors.serviceUnavailable(unavailableReason(this.options.settings.current().costControl));
        }
        const query = request.query as Record<string, unknown>;
        const end = query.end ? new Date(String(query.end)) : new Date();
        const start = query.start ? new Date(String(query.start)) : new Date(end.getTime() - 3600_000);
        if (Number.isNaN(end.getTime()) || Number.isNaN(start.getTime()) || start >= end) {
          throw errors.badRequest("give start and end as RFC 3339 times, start before end");
        }
        const rangeSeconds = (end.getTime() - start.getTime()) / 1000;
        const step = query.step ? Number(query.step) : Math.max(15, Math.ceil(rangeSeconds / 120));
        if (!Number.isFinite(step) || step < 1 || rangeSeconds / step > 11_000) {
          throw errors.badRequest("step must be a number of seconds giving at most 11000 points over the range");
        }
        try {
          const report = await costReport({
            prometheus: url,
            start,
            end,
            stepSeconds: step,
            scrapeIntervalSeconds:
              prometheusDurationSeconds(this.options.settings.current().costControl.global.scrapeInterval) ?? 30,
            prices: this.options.settings.current().costControl.prices,
            unestimatedClusters: (await this.options.unestimatedClusters?.()) ?? [],
          });
          return reply
            .code(200)
            .header("content-type", "application/json")
            .header("cache-control", "no-store")
            .send(JSON.stringify({ kind: "CostReport", ...report }));
        } catch (error) {
          throw errors.serviceUnavailable(`prometheus did not answer: ${(error as Error).message}`);
        }
      });
    };
  }
}

/** Why the Cost page has no Prometheus to ask (on this replica). */
function unavailableReason(settings: CostControlSettings): string {
  if (!settings.enabled) return "cost control is off: set costControl.enabled in the platform Config";
  if (settings.global.replicas === 0) return REPLICAS_ZERO;
  return "the metrics are served by the replica that leads (or give --prometheus-url)";
}
