// The scrape targets of the connected clusters whose metrics Prometheus runs: the platform's Prometheus federates
// their usage series through the platform (`/platform/clusters/<name>/federate`, cluster-metrics.ts). A cluster's
// agent speaks for that cluster alone: the route passes on only what it may report, and each scrape pins its
// cluster label (set over whatever the answer says) and keeps its own job and instance (honor_labels off), so even a
// series that slipped through cannot claim another cluster.

import type { Cluster } from "../../apis/management/v1/cluster-schema.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import type { ScrapeTarget } from "../../metrics/prometheus-runner.ts";
import type { Registry } from "../../registry/registry.ts";
import { systemContext } from "../../registry/system-context.ts";
import { clusterMetricsRunning, FEDERATED_SERIES, federatePath } from "../clusters/cluster-metrics.ts";

const context = () => systemContext("system:cost-control", "cost-control");

/** One target per cluster whose metrics Prometheus runs (address, CA and token are cost control's to fill in). */
export async function federatedClusters(registry: Registry): Promise<ScrapeTarget[]> {
  const store = registry.store(GROUP, "clusters");
  if (!store) return [];
  const list = await store.list(context(), {});
  return (list.items as Cluster[]).filter(clusterMetricsRunning).map((cluster) => {
    const name = cluster.metadata.name ?? "";
    return {
      job: `cluster-${name}`,
      address: "",
      metricsPath: federatePath(name),
      params: { "match[]": [FEDERATED_SERIES] },
      setLabels: { cluster: name },
      honorLabels: false,
    };
  });
}
