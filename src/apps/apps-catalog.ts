// The chart catalog of the Config's apps block: each repository's index.yaml read at start, on every change of the
// block and every refreshInterval (default 10 m), kept per repository (a failing repository keeps its last good
// index and says why), and the apps the console offers: the predefined apps (with the clusters they show on), then,
// unless noDefault, every chart of the repositories as a default app. Readmes come from the app's readmeUrl or the
// chart archive's README.md, cached. An index whose bytes did not change since the last read is not parsed again.

import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { AppsSettings, ChartRepositorySettings } from "../config/system-settings.ts";
import { MAX_ARCHIVE_BYTES, MAX_INDEX_BYTES } from "./chart-archive.ts";
import { readmeOfChartArchive } from "./chart-readme.ts";
import { type Chart, parseHelmIndex } from "./helm-index.ts";
import { displayUrl, FetchError, fetchBytes } from "./http-fetch.ts";

const README_CACHE = 64;

export interface RepositoryState {
  name: string;
  url: string;
  /** Whether the repository needs a user name (never the password). */
  username?: string;
  insecure: boolean;
  charts: Chart[];
  /** When its index was last read successfully. */
  refreshedTime?: string;
  /** Why the last read failed (the index shown is the last good one). */
  error?: string;
}

export interface CatalogApp {
  /** repo/chart */
  chart: string;
  repository: string;
  title: string;
  description?: string;
  iconUrl?: string;
  /** Version preselected: the predefined initialVersion, else the newest. */
  version?: string;
  versions: string[];
  initialValues?: string;
  /** Clusters the app is shown on (empty: everywhere). */
  clusters: string[];
  predefined: boolean;
  /** The chart is in no repository's index (a typo, or the repository failed). */
  missing?: boolean;
}

export interface CatalogView {
  repositories: RepositoryState[];
  apps: CatalogApp[];
}

export interface AppsCatalogOptions {
  settings: () => AppsSettings;
  logger?: Logger;
}

export class AppsCatalog {
  private readonly options: AppsCatalogOptions;
  private states = new Map<string, RepositoryState>();
  /** The digest of each repository's last parsed index.yaml: an unchanged index is not parsed again. */
  private digests = new Map<string, string>();
  private readonly readmes = new Map<string, string>();
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  /** Refreshes done (tests and the benchmark wait on it). */
  refreshes = 0;
  /** Indexes parsed (an unchanged one is not). */
  parses = 0;

  constructor(options: AppsCatalogOptions) {
    this.options = options;
  }

  /** Reads every repository now and then every refreshInterval. */
  start(): void {
    void this.refresh();
    this.schedule();
  }

  /** The block changed: read again at once, on the new interval. */
  reconfigure(): void {
    this.readmes.clear();
    void this.refresh();
    this.schedule();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private schedule(): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.refresh(), this.options.settings().refreshIntervalMs);
    this.timer.unref();
  }

  /** Reads every repository's index (one refresh at a time; a call during one waits for the next). */
  async refresh(): Promise<void> {
    if (this.refreshing) await this.refreshing;
    this.refreshing = this.refreshAll().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshAll(): Promise<void> {
    const repositories = this.options.settings().repositories;
    const next = new Map<string, RepositoryState>();
    await Promise.all(
      repositories.map(async (repository) => {
        const key = `${repository.name}\n${repository.url}`;
        const previous = this.states.get(key);
        const state: RepositoryState = {
          name: repository.name,
          url: repository.url,
          username: repository.username || undefined,
          insecure: repository.insecure,
          charts: previous?.charts ?? [],
          refreshedTime: previous?.refreshedTime,
        };
        try {
          const text = await fetchBytes(indexUrl(repository.url), {
            ...fetchOptions(repository),
            maxBytes: MAX_INDEX_BYTES,
          });
          const digest = createHash("sha256").update(text).digest("hex");
          if (!previous || this.digests.get(key) !== digest) {
            state.charts = parseHelmIndex(text.toString("utf8"), repository.url);
            this.digests.set(key, digest);
            this.parses++;
          }
          state.refreshedTime = new Date().toISOString();
        } catch (error) {
          state.error =
            error instanceof FetchError
              ? error.message
              : `${displayUrl(indexUrl(repository.url))}: ${(error as Error).message}`;
          this.options.logger?.warn(
            { repository: repository.name, err: state.error },
            "reading a chart repository failed",
          );
        }
        next.set(key, state);
      }),
    );
    this.states = next;
    for (const key of this.digests.keys()) if (!next.has(key)) this.digests.delete(key);
    this.refreshes++;
  }

  view(): CatalogView {
    const settings = this.options.settings();
    const repositories = [...this.states.values()];
    const apps: CatalogApp[] = [];
    const seen = new Set<string>();
    for (const app of settings.predefinedApps) {
      const [repoName, chartName] = app.chart.split("/");
      const chart = repositories.find((r) => r.name === repoName)?.charts.find((c) => c.name === chartName);
      seen.add(app.chart);
      apps.push({
        chart: app.chart,
        repository: repoName,
        title: app.title,
        description: chart?.description,
        iconUrl: app.iconUrl || chart?.icon,
        version: app.initialVersion || chart?.versions[0]?.version,
        versions: chart?.versions.map((v) => v.version) ?? [],
        initialValues: app.initialValues || undefined,
        clusters: app.clusters,
        predefined: true,
        ...(chart ? {} : { missing: true }),
      });
    }
    if (!settings.noDefault) {
      for (const repository of repositories) {
        for (const chart of repository.charts) {
          const id = `${repository.name}/${chart.name}`;
          if (seen.has(id)) continue;
          apps.push({
            chart: id,
            repository: repository.name,
            title: chart.name,
            description: chart.description,
            iconUrl: chart.icon,
            version: chart.versions[0]?.version,
            versions: chart.versions.map((v) => v.version),
            clusters: [],
            predefined: false,
          });
        }
      }
    }
    return { repositories, apps };
  }

  /** The readme of an app's chart version: its readmeUrl, else the archive's README.md; undefined when none. */
  async readme(chartId: string, version: string | undefined): Promise<string | undefined> {
    const settings = this.options.settings();
    const [repoName, chartName] = chartId.split("/");
    const repository = settings.repositories.find((r) => r.name === repoName);
    const predefined = settings.predefinedApps.find((app) => app.chart === chartId);
    const chart = [...this.states.values()].find((r) => r.name === repoName)?.charts.find((c) => c.name === chartName);
    const entry = chart?.versions.find((v) => v.version === version) ?? chart?.versions[0];
    const cacheKey = `${chartId}@${predefined?.readmeUrl || entry?.version || ""}`;
    const cached = this.readmes.get(cacheKey);
    if (cached !== undefined) return cached;
    let text: string | undefined;
    if (predefined?.readmeUrl) {
      text = (await fetchBytes(predefined.readmeUrl, { maxBytes: 512 * 1024 })).toString("utf8");
    } else if (repository && entry?.urls[0]) {
      const archive = await fetchBytes(entry.urls[0], {
        ...fetchOptions(repository),
        maxBytes: MAX_ARCHIVE_BYTES,
        credentialsHost: new URL(repository.url).host,
      });
      text = readmeOfChartArchive(archive);
    }
    if (text !== undefined) {
      if (this.readmes.size >= README_CACHE) this.readmes.delete(this.readmes.keys().next().value as string);
      this.readmes.set(cacheKey, text);
    }
    return text;
  }
}

function indexUrl(url: string): string {
  return `${url.replace(/\/+$/, "")}/index.yaml`;
}

function fetchOptions(repository: ChartRepositorySettings) {
  return { username: repository.username, password: repository.password, insecure: repository.insecure };
}
