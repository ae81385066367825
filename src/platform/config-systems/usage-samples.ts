// The usage series the platform's /metrics serves (src/metrics/usage.ts): its own process, every virtual cluster
// instance's last reported usage (status.usage), labelled by its project, its cluster and its name, and every
// connected cluster's agent (its Cluster's status.usage from the last heartbeat), labelled by the cluster. A cluster
// whose metrics Prometheus runs (cluster-metrics.ts) is left out: the platform's Prometheus federates it from there.

import type { Cluster } from "../../apis/management/v1/cluster-schema.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import { projectOfNamespace } from "../../apis/management/v1/project.ts";
import { placedOnCluster } from "../../apis/management/v1/virtualclusterinstance.ts";
import type { VirtualClusterInstance } from "../../apis/management/v1/virtualclusterinstance-schema.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { Registry as MetricsRegistry } from "../../http/prometheus.ts";
import { processUsage } from "../../metrics/process-usage.ts";
import { counterTotal, registerUsageMetrics, type UsageSample } from "../../metrics/usage.ts";
import type { Registry } from "../../registry/registry.ts";
import { systemContext } from "../../registry/system-context.ts";
import type { KeyValueStore } from "../../storage/types.ts";
import { clusterMetricsRunning } from "../clusters/cluster-metrics.ts";

export function registerPlatformUsage(options: {
  metrics: MetricsRegistry;
  registry: Registry;
  storage: KeyValueStore;
  settings: LiveSettings;
}): void {
  const { metrics, registry, storage, settings } = options;
  registerUsageMetrics(metrics, async (): Promise<UsageSample[]> => {
    const own: UsageSample = {
      labels: { project: "", cluster: "", virtualcluster: "", component: "platform" },
      usage: {
        ...processUsage(),
        syncedObjects: 0,
        apiRequests: await counterTotal(metrics, "apiserver_request_total"),
        storageBytes: (await storage.stats?.().catch(() => undefined))?.sizeBytes ?? 0,
      },
    };
    const store = registry.store(GROUP, "virtualclusterinstances");
    if (!store) return [own];
    const clusters = await listClusters(registry);
    // A cluster whose own metrics Prometheus runs is counted there (federated), not from heartbeats: never twice.
    const federated = new Set(clusters.filter(clusterMetricsRunning).map((c) => c.metadata.name ?? ""));
    const prefix = settings.current().projectNamespacePrefix;
    const list = await store.list(systemContext("system:metrics", "usage-metrics"), {});
    const instances = (list.items as VirtualClusterInstance[]).flatMap((instance): UsageSample[] => {
      const usage = instance.status?.usage;
      // Only a placed instance is on its cluster: an external one's clusterRef is its own say, written without `use`
      // of that cluster, so it neither bills the cluster nor hides behind one that federates.
      const cluster = placedOnCluster(instance) ? (instance.spec?.clusterRef?.cluster ?? "") : "";
      if (!usage || federated.has(cluster)) return [];
      return [
        {
          labels: {
            project: projectOfNamespace(prefix, instance.metadata.namespace) ?? "",
            cluster,
            virtualcluster: instance.metadata.name ?? "",
            component: "virtualcluster",
          },
          usage: {
            cpuSeconds: usage.cpuSeconds ?? 0,
            residentMemoryBytes: usage.residentMemoryBytes ?? 0,
            syncedObjects: usage.syncedObjects ?? 0,
            apiRequests: usage.apiRequests ?? 0,
            storageBytes: usage.storageBytes ?? 0,
          },
        },
      ];
    });
    return [own, ...instances, ...agentSamples(clusters.filter((c) => !federated.has(c.metadata.name ?? "")))];
  });
}

async function listClusters(registry: Registry): Promise<Cluster[]> {
  const store = registry.store(GROUP, "clusters");
  if (!store) return [];
  return (await store.list(systemContext("system:metrics", "usage-metrics"), {})).items as Cluster[];
}

/** The agents of the clusters online now, as of their last heartbeat. */
function agentSamples(clusters: Cluster[]): UsageSample[] {
  return clusters.flatMap((cluster): UsageSample[] => {
    const usage = cluster.status?.usage;
    if (!usage || !cluster.status?.online) return [];
    return [
      {
        labels: { project: "", cluster: cluster.metadata.name ?? "", virtualcluster: "", component: "agent" },
        usage: {
          cpuSeconds: usage.cpuSeconds ?? 0,
          residentMemoryBytes: usage.residentMemoryBytes ?? 0,
          syncedObjects: 0,
          apiRequests: usage.apiRequests ?? 0,
          storageBytes: 0,
        },
      },
    ];
  });
}
