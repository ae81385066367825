// Usage as Prometheus series, labelled by project, cluster and virtual cluster: what cost control charts and prices.
// Every process exposes its own (the platform, a cluster agent, a virtual cluster runtime), and the platform also
// exposes what each virtual cluster reported in its last heartbeat (VirtualClusterInstance status.usage), so one
// scrape of the platform covers virtual clusters wherever they run. `component` says which process a series is.

import { statSync } from "node:fs";
import { Counter, Gauge, type Registry } from "../http/prometheus.ts";

/** One process's usage, as a runtime reports it in its heartbeat (status.usage). */
export interface UsageReport {
  /** CPU time the process used since it started (user + system), seconds. */
  cpuSeconds: number;
  residentMemoryBytes: number;
  /** Objects the syncer keeps in sync (0 for the platform and agents). */
  syncedObjects: number;
  /** API requests the process served since it started. */
  apiRequests: number;
  /** Bytes of its store on disk. */
  storageBytes: number;
}

export interface UsageLabels {
  project: string;
  cluster: string;
  virtualcluster: string;
  /** platform, agent or virtualcluster */
  component: string;
}

export interface UsageSample {
  labels: UsageLabels;
  usage: UsageReport;
}

export const USAGE_METRICS = {
  cpu: "vcp_usage_cpu_seconds_total",
  memory: "vcp_usage_resident_memory_bytes",
  objects: "vcp_usage_synced_objects",
  requests: "vcp_usage_api_requests_total",
  storage: "vcp_usage_storage_bytes",
} as const;

const LABELS = ["project", "cluster", "virtualcluster", "component"] as const;

/** Registers the usage series; `samples` is read at every scrape (it may be async: the platform lists instances). */
export function registerUsageMetrics(registry: Registry, samples: () => UsageSample[] | Promise<UsageSample[]>): void {
  // One read of the samples per scrape, shared by the five series.
  let pending: Promise<UsageSample[]> | undefined;
  const read = () => {
    pending ??= Promise.resolve(samples()).finally(() => {
      setImmediate(() => {
        pending = undefined;
      });
    });
    return pending;
  };
  const series = (kind: "counter" | "gauge", name: string, help: string, value: (usage: UsageReport) => number) => {
    const Type = kind === "counter" ? Counter : Gauge;
    new Type({
      name,
      help,
      labelNames: [...LABELS],
      registers: [registry],
      async collect() {
        this.reset();
        for (const sample of await read()) {
          const amount = value(sample.usage);
          if (!Number.isFinite(amount) || amount < 0) continue;
          const labels = { ...sample.labels };
          if (this instanceof Counter) this.inc(labels, amount);
          else (this as Gauge).set(labels, amount);
        }
      },
    });
  };
  series("counter", USAGE_METRICS.cpu, "CPU time used, by project, cluster and virtual cluster.", (u) => u.cpuSeconds);
  series(
    "gauge",
    USAGE_METRICS.memory,
    "Resident memory, by project, cluster and virtual cluster.",
    (u) => u.residentMemoryBytes,
  );
  series(
    "gauge",
    USAGE_METRICS.objects,
    "Objects kept in sync, by project, cluster and virtual cluster.",
    (u) => u.syncedObjects,
  );
  series(
    "counter",
    USAGE_METRICS.requests,
    "API requests served, by project, cluster and virtual cluster.",
    (u) => u.apiRequests,
  );
  series(
    "gauge",
    USAGE_METRICS.storage,
    "Bytes stored on disk, by project, cluster and virtual cluster.",
    (u) => u.storageBytes,
  );
}

/** Bytes of the files on disk (missing ones count 0). */
export function filesBytes(paths: string[]): number {
  let total = 0;
  for (const path of paths) {
    try {
      total += statSync(path).size;
    } catch {
      // absent: 0
    }
  }
  return total;
}

/** The sum of a counter's values in a prom-client registry (e.g. apiserver_request_total). */
export async function counterTotal(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}
