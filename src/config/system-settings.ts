// The Config's four systems as their subsystems read them: costControl (src/metrics/), secretStore
// (src/secretstore/), apps (src/apps/) and cloud (maintenance windows). Each block is mapped with its defaults, so a
// reader never repeats one; an absent block is the block switched off.

import { DEFAULT_METRICS_RETENTION, DEFAULT_SYNC_INTERVAL } from "./defaults.ts";
import { parseGoDuration } from "./go-duration.ts";
import { parseTimeWindow, parseWeekday } from "./time-window.ts";

export interface MetricsSettings {
  /** 0: no Prometheus for this scope; 1: one (validation refuses more). */
  replicas: number;
  /** Prometheus retention time ("1y"). */
  retention: string;
  /** Prometheus retention size, as written in the Config ("10Gi"); empty: no size limit. */
  storageSize: string;
  /** How often targets are scraped (a Prometheus duration, default "30s"). */
  scrapeInterval: string;
  /** resources.limits.memory as written ("2Gi"); empty: none. GOMEMLIMIT and the hard limit the runner enforces. */
  memoryLimit: string;
  /** resources.limits.cpu as written ("1500m"); empty: none. GOMAXPROCS (whole cores, rounded up). */
  cpuLimit: string;
  /** resources.requests as written: checked against the machine before Prometheus starts. */
  memoryRequest: string;
  cpuRequest: string;
  /** storage.storageClass: undefined (unset) keeps the TSDB in the data directory; "-" or "": a temporary one. */
  storageClass?: string;
}

export interface CostPrices {
  currency: string;
  cpuCoreHour: number;
  memoryGiBHour: number;
  storageGiBMonth: number;
  millionApiRequests: number;
}

export interface CostControlSettings {
  enabled: boolean;
  global: MetricsSettings;
  /** For every connected cluster unless its Cluster spec overrides it. */
  cluster: MetricsSettings;
  /** cluster.costEstimator.replicas (default 1): 0 turns the cost estimate off for every cluster not overriding it. */
  costEstimatorReplicas: number;
  prices: CostPrices;
}

export interface SecretStoreSettings {
  enabled: boolean;
  /** The store's address (the Config's, else VAULT_ADDR when the config was parsed); empty: none. */
  address: string;
  skipTLSVerify: boolean;
  /** X-Vault-Namespace; empty: none. */
  namespace: string;
  /** Never log or return it. */
  token: string;
  /** The platform Secret holding the token, used when token is empty. */
  tokenSecretRef?: { name: string; key: string; optional: boolean };
  syncIntervalMs: number;
  mount: string;
  pathPrefix: string;
}

export interface ChartRepositorySettings {
  name: string;
  url: string;
  username: string;
  /** Never log or return it. */
  password: string;
  insecure: boolean;
}

export interface PredefinedAppSettings {
  /** repo/chart */
  chart: string;
  initialVersion: string;
  initialValues: string;
  clusters: string[];
  title: string;
  iconUrl: string;
  readmeUrl: string;
}

export interface AppsSettings {
  noDefault: boolean;
  repositories: ChartRepositorySettings[];
  predefinedApps: PredefinedAppSettings[];
  refreshIntervalMs: number;
}

export interface MaintenanceWindowSettings {
  /** 0 = Sunday ... 6 = Saturday (the day the window opens). */
  dayOfWeek: number;
  /** Minutes after midnight UTC; the window may cross midnight (end < start). */
  startMinute: number;
  endMinute: number;
}

export interface CloudSettings {
  releaseChannel: string;
  /** Absent: disruptive background work runs whenever it is due. */
  maintenanceWindow?: MaintenanceWindowSettings;
}

export const DEFAULT_SCRAPE_INTERVAL = "30s";
export const DEFAULT_APPS_REFRESH_INTERVAL = "10m";
export const DEFAULT_SECRET_STORE_MOUNT = "secret";
export const DEFAULT_SECRET_STORE_PATH_PREFIX = "virtualcluster-platform";
export const DEFAULT_PRICES: CostPrices = Object.freeze({
  currency: "USD",
  cpuCoreHour: 0.03,
  memoryGiBHour: 0.004,
  storageGiBMonth: 0.1,
  millionApiRequests: 0,
});

type Block = Record<string, unknown> | undefined;

const text = (block: Block, key: string, fallback = ""): string => {
  const value = block?.[key];
  return typeof value === "string" && value !== "" ? value : fallback;
};
const flag = (block: Block, key: string): boolean => block?.[key] === true;
const child = (block: Block, key: string): Block => {
  const value = block?.[key];
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
};
const items = (block: Block, key: string): Record<string, unknown>[] => {
  const value = block?.[key];
  return Array.isArray(value) ? value.filter((item) => item && typeof item === "object") : [];
};
const number = (block: Block, key: string, fallback: number): number => {
  const value = block?.[key];
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
};

/** A Go duration in milliseconds (validated on write; the fallback covers only what validation refused). */
function goMs(value: string, fallback: string): number {
  const nanos = parseGoDuration(value) ?? parseGoDuration(fallback) ?? 0n;
  return Number(nanos / 1_000_000n);
}

const quantity = (block: Block, key: string): string => {
  const value = block?.[key];
  return typeof value === "number" || typeof value === "string" ? String(value) : "";
};

function metricsOf(block: Block): MetricsSettings {
  const metrics = child(block, "metrics");
  const storage = child(metrics, "storage");
  const resources = child(metrics, "resources");
  const limits = child(resources, "limits");
  const requests = child(resources, "requests");
  const storageClass = storage?.storageClass;
  return {
    replicas: number(metrics, "replicas", 1),
    retention: text(metrics, "retention", DEFAULT_METRICS_RETENTION),
    storageSize: String(storage?.size ?? ""),
    scrapeInterval: text(metrics, "scrapeInterval", DEFAULT_SCRAPE_INTERVAL),
    memoryLimit: quantity(limits, "memory"),
    cpuLimit: quantity(limits, "cpu"),
    memoryRequest: quantity(requests, "memory"),
    cpuRequest: quantity(requests, "cpu"),
    ...(typeof storageClass === "string" ? { storageClass } : {}),
  };
}

export function costControlSettingsOf(cost: Block): CostControlSettings {
  const prices = child(cost, "prices");
  return {
    enabled: flag(cost, "enabled"),
    global: metricsOf(child(cost, "global")),
    cluster: metricsOf(child(cost, "cluster")),
    costEstimatorReplicas: number(child(child(cost, "cluster"), "costEstimator"), "replicas", 1),
    prices: {
      currency: text(prices, "currency", DEFAULT_PRICES.currency),
      cpuCoreHour: number(prices, "cpuCoreHour", DEFAULT_PRICES.cpuCoreHour),
      memoryGiBHour: number(prices, "memoryGiBHour", DEFAULT_PRICES.memoryGiBHour),
      storageGiBMonth: number(prices, "storageGiBMonth", DEFAULT_PRICES.storageGiBMonth),
      millionApiRequests: number(prices, "millionApiRequests", DEFAULT_PRICES.millionApiRequests),
    },
  };
}

/** `env` supplies VAULT_ADDR when the block names no address. */
export function secretStoreSettingsOf(
  store: Block,
  env: Record<string, string | undefined> = process.env,
): SecretStoreSettings {
  const auth = child(store, "auth");
  const ref = child(auth, "tokenSecretRef");
  return {
    enabled: flag(store, "enabled"),
    address: text(store, "address", env.VAULT_ADDR ?? ""),
    skipTLSVerify: flag(store, "skipTLSVerify"),
    namespace: text(store, "namespace"),
    token: text(auth, "token"),
    tokenSecretRef: ref && {
      name: text(ref, "name"),
      key: text(ref, "key", "token"),
      optional: flag(ref, "optional"),
    },
    syncIntervalMs: goMs(text(store, "syncInterval", DEFAULT_SYNC_INTERVAL), DEFAULT_SYNC_INTERVAL),
    mount: text(store, "mount", DEFAULT_SECRET_STORE_MOUNT).replace(/^\/+|\/+$/g, ""),
    pathPrefix: text(store, "pathPrefix", DEFAULT_SECRET_STORE_PATH_PREFIX).replace(/^\/+|\/+$/g, ""),
  };
}

export function appsSettingsOf(apps: Block): AppsSettings {
  return {
    noDefault: flag(apps, "noDefault"),
    repositories: items(apps, "repositories")
      .filter((repository) => text(repository, "url") !== "")
      .map((repository, index) => ({
        name: text(repository, "name", `repository-${index}`),
        url: text(repository, "url"),
        username: text(repository, "username"),
        password: text(repository, "password"),
        insecure: flag(repository, "insecure"),
      })),
    predefinedApps: items(apps, "predefinedApps")
      .filter((app) => text(app, "chart").includes("/"))
      .map((app) => ({
        chart: text(app, "chart"),
        initialVersion: text(app, "initialVersion"),
        initialValues: text(app, "initialValues"),
        clusters: Array.isArray(app.clusters) ? app.clusters.filter((c) => typeof c === "string") : [],
        title: text(app, "title", text(app, "chart").split("/")[1]),
        iconUrl: text(app, "iconUrl"),
        readmeUrl: text(app, "readmeUrl"),
      })),
    refreshIntervalMs: goMs(
      text(apps, "refreshInterval", DEFAULT_APPS_REFRESH_INTERVAL),
      DEFAULT_APPS_REFRESH_INTERVAL,
    ),
  };
}

export function cloudSettingsOf(cloud: Block): CloudSettings {
  const window = child(cloud, "maintenanceWindow");
  const day = parseWeekday(text(window, "dayOfWeek"));
  const range = parseTimeWindow(text(window, "timeWindow"));
  return {
    releaseChannel: text(cloud, "releaseChannel"),
    maintenanceWindow:
      day === undefined || "error" in range
        ? undefined
        : { dayOfWeek: day, startMinute: range.startMinute, endMinute: range.endMinute },
  };
}
