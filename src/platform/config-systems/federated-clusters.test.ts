import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import type { Cluster } from "../../apis/management/v1/cluster-schema.ts";
import { prometheusConfig } from "../../metrics/prometheus-runner.ts";
import type { Registry } from "../../registry/registry.ts";
import { federatedClusters } from "./federated-clusters.ts";

const cluster = (name: string, metrics: "True" | "False" | undefined): Cluster => ({
  apiVersion: "management.platform.sh/v1",
  kind: "Cluster",
  metadata: { name },
  spec: {},
  status: metrics ? { conditions: [{ type: "MetricsReady", status: metrics }] as never } : undefined,
});
const registry = (clusters: Cluster[]) =>
  ({ store: () => ({ list: async () => ({ items: clusters }) }) }) as unknown as Registry;

describe("federatedClusters()", () => {
  it("federatedClusters() federates each cluster whose metrics run, its cluster label pinned, its job's own labels kept", async () => {
    const targets = await federatedClusters(
      registry([cluster("edge", "True"), cluster("plain", "False"), cluster("new", undefined)]),
    );
    assert.deepEqual(targets, [
      {
        job: "cluster-edge",
        address: "",
        metricsPath: "/platform/clusters/edge/federate",
        params: { "match[]": ['{__name__=~"vcp_usage_.+"}'] },
        setLabels: { cluster: "edge" },
        honorLabels: false,
      },
    ]);
    const [job] = parse(
      prometheusConfig({
        scrapeInterval: "30s",
        targets: targets.map((target) => ({ ...target, address: "https://127.0.0.1:8443" })),
      }),
    ).scrape_configs;
    assert.equal(job.honor_labels, false);
    assert.deepEqual(job.metric_relabel_configs, [{ target_label: "cluster", replacement: "edge" }]);
  });

  it("federatedClusters() is empty without clusters registered", async () => {
    assert.deepEqual(await federatedClusters({ store: () => undefined } as unknown as Registry), []);
  });
});
