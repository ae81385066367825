// Schema of status.costControl: the dashboard and its metrics infrastructure (global and per connected cluster).

import { array, boolean, declared, integer, mapOf, number, object, string } from "../apimachinery/schema-builders.ts";
import { stringWithDefault } from "./schema-builders.ts";

/** A Kubernetes quantity: a number or a string such as 500m (int-or-string without the anyOf of intOrString()). */
const quantity = declared<number | string>({
  "x-kubernetes-int-or-string": true,
  description: "A quantity such as 500m, 2 or 4Gi.",
});
const quantityMap = (description: string) => mapOf(quantity, description);

const claimsSchema = (description: string) =>
  array(
    object(
      {
        name: string("Name of a resource claim of the pod."),
        request: string("Request within the claim."),
      },
      "A dynamic resource claim.",
      ["name"],
    ),
    description,
  );

/** What a pod's resources mean for the Prometheus process (src/metrics/prometheus-limits.ts). */
const processResourcesSchema = object(
  {
    limits: quantityMap(
      "Limits of the Prometheus process: memory sets GOMEMLIMIT to 90% of it, and is a hard limit (a Prometheus whose anonymous resident memory passes it is killed, as the OOM killer would, and started again; MetricsReady counts the restarts); cpu sets GOMAXPROCS to the cores, rounded up (a process has no CFS quota: 500m allows one core). Only cpu and memory.",
    ),
    requests: quantityMap(
      "Requests, checked as a scheduler would: when the machine has fewer cores or less memory than requested, Prometheus is not started and MetricsReady says why. No other effect on the running process. Only cpu and memory, each at most its limit.",
    ),
    claims: claimsSchema("Refused: dynamic resource claims need a pod, and Prometheus runs as a process."),
  },
  "Compute resources of the Prometheus process.",
);

const metricsSchema = object(
  {
    replicas: integer(
      "Prometheus processes for this scope: 0 runs none (global: the Cost page needs --prometheus-url; cluster: the platform counts the cluster from its agent's heartbeats), 1 (default) runs one. More is refused: a second copy on the same machine adds no availability; run your own pair and give --prometheus-url.",
      { minimum: 0 },
    ),
    resources: processResourcesSchema,
    retention: stringWithDefault('How long metrics are kept, as a duration such as "15d", "2w" or "1y".', "1y"),
    scrapeInterval: stringWithDefault(
      'How often Prometheus scrapes its targets, as a duration such as "15s" or "1m" (an addition of this platform).',
      "30s",
    ),
    storage: object(
      {
        storageClass: string(
          'Where the TSDB lives. Unset: the data directory (<data-dir>/prometheus/data), kept across restarts. "-" or empty (no persistent storage): a temporary directory, deleted when Prometheus stops. Other values are refused: there is no volume to provision for a process.',
        ),
        size: string(
          "Most disk the TSDB may use, a quantity such as 10Gi (Prometheus --storage.tsdb.retention.size: the oldest blocks go first). Empty: no size limit.",
        ),
      },
      "Storage of the metrics.",
    ),
  },
  "Metrics infrastructure: a Prometheus process.",
);

const price = (description: string, value: number) =>
  number(`${description} Default: ${value}.`, { minimum: 0, default: value });

/** Per-unit prices of the cost estimate (an addition of this platform: the specification shows none). */
const pricesSchema = object(
  {
    currency: stringWithDefault("Currency the prices are in, shown beside every estimate.", "USD"),
    cpuCoreHour: price("Price of one CPU core used for one hour.", 0.03),
    memoryGiBHour: price("Price of one GiB of resident memory for one hour.", 0.004),
    storageGiBMonth: price("Price of one GiB of stored data for one month (30 days).", 0.1),
    millionApiRequests: price("Price of one million API requests.", 0),
  },
  "Per-unit prices the Cost page multiplies usage by.",
);

/** The per-cluster settings: the Config's defaults for every connected cluster, and a Cluster's own overrides. */
export function clusterCostControlSchema(description: string) {
  return object(
    {
      metrics: metricsSchema,
      costEstimator: object(
        {
          replicas: integer(
            "0 turns the cost estimate off for the cluster (the Cost page shows its virtual clusters' usage, not estimated); 1 (default) keeps it. The estimate is computed by the platform's API server for each Cost page request: more than 1 is refused.",
            { minimum: 0 },
          ),
          resources: object(
            {
              limits: quantityMap("Refused: there is no estimator process to limit."),
              requests: quantityMap("Refused: there is no estimator process to schedule."),
              claims: claimsSchema("Refused: there is no estimator pod."),
            },
            "Must stay unset: the estimate runs inside the platform's API server (under its flow control), not as a process of its own.",
          ),
        },
        "The cost estimator.",
      ),
    },
    description,
  );
}

export const costControlSchema = object(
  {
    enabled: boolean("Enable the cost control dashboard and its metrics infrastructure."),
    prices: pricesSchema,
    global: object({ metrics: metricsSchema }, "Settings of the platform's own metrics."),
    cluster: clusterCostControlSchema("Settings for all connected clusters, unless a Cluster overrides them."),
  },
  "Cost control dashboard and metrics.",
);
