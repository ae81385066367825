// Checks of status.costControl beyond the schema, shared with a Cluster's spec.costControl overrides. Prometheus
// runs as a process (beside the platform, and beside each cluster's agent), not as a pod, so the Kubernetes-shaped
// fields are held to what a process can honour, and anything else is refused with the reason:
// - replicas: 0 (no Prometheus for that scope) or 1; a second copy on the same machine adds no availability.
// - resources: limits and requests of cpu and memory only (limits.memory becomes GOMEMLIMIT and a hard limit,
//   limits.cpu GOMAXPROCS; requests are checked against the machine); a request above its limit is refused as
//   Kubernetes refuses it; claims (dynamic resource allocation) need a pod and are refused.
// - costEstimator: replicas 0 (no estimate for the cluster) or 1; no resources (there is no estimator process).
// - storage.storageClass: unset (the data directory) or "-"/"" (a temporary directory, deleted at stop).

import { isPlainObject } from "../apimachinery/types.ts";
import { isNegativeQuantity, isPrometheusDuration, isQuantity, quantityValue } from "./formats.ts";
import { read } from "./problems.ts";
import type { PathSegment } from "./yaml-source.ts";

/** Reports one invalid value (Problems.invalid, or a Cluster's field errors). */
export type ReportInvalid = (path: PathSegment[], value: unknown, detail: string) => void;

const PROCESS_RESOURCES = ["cpu", "memory"];
/** storageClass values meaning "no persistent storage" (the spec's "disables dynamic provisioning"). */
export const EPHEMERAL_STORAGE_CLASSES = ["-", ""];

function checkReplicas(block: Record<string, unknown>, at: PathSegment[], what: string, invalid: ReportInvalid): void {
  const replicas = block.replicas;
  if (typeof replicas === "number" && replicas > 1) {
    invalid([...at, "replicas"], replicas, `must be 0 or 1: ${what}`);
  }
}

function checkResources(resources: unknown, at: PathSegment[], invalid: ReportInvalid): void {
  if (!isPlainObject(resources)) return;
  const limits = read.object(resources, "limits") ?? {};
  for (const kind of ["limits", "requests"]) {
    for (const [name, value] of Object.entries(read.object(resources, kind) ?? {})) {
      const path = [...at, kind, name];
      if (!PROCESS_RESOURCES.includes(name)) {
        invalid(path, value, "only cpu and memory apply to a process (the metrics' disk is storage.size)");
      } else if (!isQuantity(value)) invalid(path, value, "must be a quantity such as 500m, 2 or 4Gi");
      else if (isNegativeQuantity(value)) invalid(path, value, "must be greater than or equal to 0");
      else if (
        kind === "requests" &&
        name in limits &&
        (quantityValue(value) ?? 0) > (quantityValue(limits[name]) ?? Infinity)
      ) {
        invalid(path, value, `must be less than or equal to ${name} limit of ${String(limits[name])}`);
      }
    }
  }
  const claims = read.list(resources, "claims");
  if (claims.length > 0) {
    invalid(
      [...at, "claims"],
      claims.length,
      "resource claims need a pod's dynamic resource allocation; a process has none",
    );
  }
}

function checkMetrics(metrics: unknown, at: PathSegment[], invalid: ReportInvalid): void {
  if (!isPlainObject(metrics)) return;
  checkReplicas(
    metrics,
    at,
    "0 runs no Prometheus for it, 1 runs one (a second on the same machine adds no availability; run your own pair and give --prometheus-url)",
    invalid,
  );
  checkResources(read.object(metrics, "resources"), [...at, "resources"], invalid);
  const scrape = read.string(metrics, "scrapeInterval");
  if (scrape && !isPrometheusDuration(scrape)) {
    invalid([...at, "scrapeInterval"], scrape, 'must be a positive duration such as "15s" or "1m"');
  }
  const retention = read.string(metrics, "retention");
  if (retention && !isPrometheusDuration(retention)) {
    invalid([...at, "retention"], retention, 'must be a positive duration such as "15d", "2w" or "1y"');
  }
  const storage = read.object(metrics, "storage");
  const size = read.string(storage, "size");
  if (size && !isQuantity(size)) invalid([...at, "storage", "size"], size, "must be a quantity such as 10Gi");
  const storageClass = read.string(storage, "storageClass");
  if (storageClass !== undefined && !EPHEMERAL_STORAGE_CLASSES.includes(storageClass)) {
    invalid(
      [...at, "storage", "storageClass"],
      storageClass,
      'must be "-" or empty (a temporary directory, deleted when Prometheus stops) or unset (the data directory): Prometheus runs as a process, with no volume to provision',
    );
  }
}

/** The per-cluster block: the Config's costControl.cluster, or a Cluster's spec.costControl. */
export function checkClusterCostControl(cluster: unknown, at: PathSegment[], invalid: ReportInvalid): void {
  checkMetrics(read.object(cluster, "metrics"), [...at, "metrics"], invalid);
  const estimator = read.object(cluster, "costEstimator");
  if (!estimator) return;
  checkReplicas(
    estimator,
    [...at, "costEstimator"],
    "0 turns the cost estimate off for the cluster, 1 keeps it (the estimate is computed by the platform's API server, not by a process of its own)",
    invalid,
  );
  const resources = read.object(estimator, "resources");
  if (resources && Object.keys(resources).length > 0) {
    invalid(
      [...at, "costEstimator", "resources"],
      "{...}",
      "the cost estimate is computed by the platform's API server for each Cost page request, not by a process of its own: there is nothing to give resources to; leave it unset",
    );
  }
}

/** status.costControl. */
export function checkCostControl(cost: Record<string, unknown>, invalid: ReportInvalid): void {
  checkMetrics(read.object(read.object(cost, "global"), "metrics"), ["costControl", "global", "metrics"], invalid);
  checkClusterCostControl(read.object(cost, "cluster"), ["costControl", "cluster"], invalid);
}
