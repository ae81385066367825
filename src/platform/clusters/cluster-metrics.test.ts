import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { waitFor } from "../../../test/support/wait-for.ts";
import type { Cluster } from "../../apis/management/v1/cluster-schema.ts";
import { prometheusConfig } from "../../metrics/prometheus-runner.ts";
import { ClusterMetrics, clusterMetricsRunning, effectiveClusterMetrics, FEDERATED_SERIES } from "./cluster-metrics.ts";

const defaults = {
  replicas: 1,
  retention: "1y",
  storageSize: "10Gi",
  scrapeInterval: "30s",
  memoryLimit: "1Gi",
  cpuLimit: "",
  memoryRequest: "",
  cpuRequest: "",
};
const cluster = (metrics?: Record<string, unknown>, conditions?: unknown[]): Cluster => ({
  apiVersion: "management.platform.sh/v1",
  kind: "Cluster",
  metadata: { name: "edge" },
  spec: metrics ? { costControl: { metrics } } : {},
  status: conditions ? { conditions: conditions as never } : undefined,
});

describe("effectiveClusterMetrics()", () => {
  it("takes each field the Cluster sets over the Config's default", () => {
    assert.deepEqual(effectiveClusterMetrics(defaults, cluster()), defaults);
    assert.deepEqual(effectiveClusterMetrics(defaults, cluster({ retention: "3d" })), { ...defaults, retention: "3d" });
    assert.deepEqual(effectiveClusterMetrics(defaults, cluster({ scrapeInterval: "1s", storage: { size: "50Mi" } })), {
      ...defaults,
      storageSize: "50Mi",
      scrapeInterval: "1s",
    });
  });

  it("takes replicas, each resource quantity and the storage class the Cluster sets (0 and empty included)", () => {
    const own = cluster({
      replicas: 0,
      resources: { limits: { cpu: "2" }, requests: { memory: "64Mi" } },
      storage: { storageClass: "" },
    });
    assert.deepEqual(effectiveClusterMetrics(defaults, own), {
      ...defaults,
      replicas: 0,
      cpuLimit: "2",
      memoryRequest: "64Mi",
      storageClass: "",
    });
    assert.equal(effectiveClusterMetrics({ ...defaults, storageClass: "-" }, cluster()).storageClass, "-");
    assert.equal(effectiveClusterMetrics(defaults, cluster()).storageClass, undefined);
  });
});

describe("ClusterMetrics.apply()", () => {
  it("apply() schedules the cluster a stored write names (its key has an empty namespace segment)", async () => {
    const asked: string[] = [];
    const metrics = new ClusterMetrics({
      registry: { storage: {} } as never,
      hub: {
        get: (name: string) => {
          asked.push(name);
          return undefined;
        },
      } as never,
      settings: { current: () => ({}), onChange: () => () => {} } as never,
    });
    const record = { key: "/management.platform.sh/clusters//edge", value: "{}", revision: 2, createRevision: 2 };
    metrics.apply({ type: "create", record });
    await waitFor(async () => asked.length > 0, "the cluster's reconcile");
    metrics.stop();
    assert.deepEqual(asked, ["edge"]);
  });
});

describe("clusterMetricsRunning()", () => {
  it("is true only while the Cluster's MetricsReady condition is True", () => {
    assert.equal(clusterMetricsRunning(cluster()), false);
    assert.equal(clusterMetricsRunning(cluster(undefined, [{ type: "MetricsReady", status: "False" }])), false);
    assert.equal(clusterMetricsRunning(cluster(undefined, [{ type: "MetricsReady", status: "True" }])), true);
  });
});

describe("prometheusConfig()", () => {
  it("prometheusConfig() writes federation parameters, labels set over what the target sends, and honor_labels", () => {
    const config = parse(
      prometheusConfig({
        scrapeInterval: "15s",
        targets: [
          {
            job: "cluster-edge",
            address: "https://127.0.0.1:8443",
            metricsPath: "/platform/clusters/edge/federate",
            params: { "match[]": [FEDERATED_SERIES] },
            setLabels: { cluster: "edge" },
            honorLabels: false,
          },
          { job: "platform", address: "https://127.0.0.1:8443", metricsPath: "/metrics" },
        ],
      }),
    );
    const [job, platform] = config.scrape_configs;
    assert.deepEqual(job.params, { "match[]": ['{__name__=~"vcp_usage_.+"}'] });
    assert.deepEqual(job.metric_relabel_configs, [{ target_label: "cluster", replacement: "edge" }]);
    assert.equal(job.honor_labels, false);
    assert.equal(platform.honor_labels, true, "the platform's own series keep their labels");
  });
});
