// Schema of status.costControl: the dashboard and its metrics infrastructure (global and per connected cluster).

import { array, boolean, declared, integer, mapOf, number, object, string } from "../apimachinery/schema-builders.ts";
import { stringWithDefault } from "./schema-builders.ts";

/** A Kubernetes quantity: a number or a string such as 500m (int-or-string without the anyOf of intOrString()). */
const quantity = declared<number | string>({
  "x-kubernetes-int-or-string": true,
  description: "A quantity such as 500m, 2 or 4Gi.",
});
const quantityMap = (description: string) => mapOf(quantity, description);

const resourcesSchema = object(
  {
    limits: quantityMap("Resource limits by resource name (cpu, memory...)."),
    requests: quantityMap("Resource requests by resource name."),
    claims: array(
      object(
        {
          name: string("Name of a resource claim of the pod."),
          request: string("Request within the claim."),
        },
        "A dynamic resource claim.",
        ["name"],
      ),
      "Dynamic resource claims.",
    ),
  },
  "Compute resources.",
);

const replicas = integer("Number of replicas.", { minimum: 0 });

const metricsSchema = object(
  {
    replicas,
    resources: resourcesSchema,
    retention: stringWithDefault('How long metrics are kept, as a duration such as "15d", "2w" or "1y".', "1y"),
    scrapeInterval: stringWithDefault(
      'How often Prometheus scrapes its targets, as a duration such as "15s" or "1m" (an addition of this platform).',
      "30s",
    ),
    storage: object(
      {
        storageClass: string(
          'Storage class. "-" or empty disables dynamic provisioning; unset uses the cluster default.',
        ),
        size: string("Size of the volume, a quantity such as 10Gi."),
      },
      "Persistent storage of the metrics.",
    ),
  },
  "Metrics infrastructure.",
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
      costEstimator: object({ replicas, resources: resourcesSchema }, "The cost estimator."),
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
