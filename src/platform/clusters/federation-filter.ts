// What a connected cluster's agent may put in the platform's Prometheus: the usage of its own cluster and of the
// virtual clusters placed on it, nothing else. The agent's federation answer is read whole (parseExposition: bounded,
// linear; a malformed answer is refused whole) and a sample is kept, unchanged, only when
//   - its name starts with vcp_usage_;
//   - its labels are among cluster, project, virtualcluster, component, and the agent's Prometheus's job and
//     instance (which the platform's scrape keeps as exported_job and exported_instance);
//   - cluster is this cluster;
//   - it is the agent's own row (component "agent", project and virtualcluster empty or absent, as
//     src/agent/cluster-prometheus.ts labels it) or a virtual cluster's (component "virtualcluster", project and
//     virtualcluster those of a non-external VirtualClusterInstance placed on this cluster);
//   - its value is a finite number, not negative (a NaN would turn every sum of the Cost report into NaN);
//   - no sample before it had the same name and labels.
// Everything else is dropped and counted.

import { formatExposition } from "../../metrics/format-exposition.ts";
import { type ExpositionSample, parseExposition } from "../../metrics/parse-exposition.ts";

/**
 * The tunnel brings at most 1 MiB of answer (callAgent), about 4,000 real series (some 250 bytes each): these bound
 * what a hostile answer of short lines costs, far above what a real one holds.
 */
export const FEDERATION_LIMITS = { maxChars: 1024 * 1024, maxSamples: 20_000, maxLabels: 16 } as const;
const USAGE_PREFIX = "vcp_usage_";
const LABELS = new Set(["cluster", "project", "virtualcluster", "component", "job", "instance"]);

export interface FederationAllowance {
  /** The cluster whose agent answered. */
  cluster: string;
  /** Project -> the names of its virtual clusters placed on the cluster (not external). */
  virtualClusters: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface FilteredFederation {
  /** The samples kept, as exposition text. */
  text: string;
  kept: number;
  dropped: number;
}

function allowed(sample: ExpositionSample, allowance: FederationAllowance): boolean {
  if (!sample.name.startsWith(USAGE_PREFIX)) return false;
  const value = Number(sample.value);
  if (!Number.isFinite(value) || value < 0) return false;
  const labels = new Map<string, string>();
  for (const [name, labelValue] of sample.labels) {
    if (!LABELS.has(name)) return false;
    labels.set(name, labelValue);
  }
  if (labels.get("cluster") !== allowance.cluster) return false;
  const project = labels.get("project") ?? "";
  const virtualcluster = labels.get("virtualcluster") ?? "";
  switch (labels.get("component")) {
    case "agent":
      return project === "" && virtualcluster === "";
    case "virtualcluster":
      return allowance.virtualClusters.get(project)?.has(virtualcluster) === true;
    default:
      return false;
  }
}

/**
 * One key per series as Prometheus tells series apart: its name and its labels in name order, an empty label as
 * none (JSON: no two series share one).
 */
function seriesKey(sample: ExpositionSample): string {
  const labels = sample.labels.filter(([, value]) => value !== "").sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([sample.name, labels]);
}

/**
 * The samples of `answer` the cluster may report, unchanged, as exposition text; throws ExpositionError when the
 * answer is not exposition text or is past FEDERATION_LIMITS.
 */
export function filterFederation(answer: string, allowance: FederationAllowance): FilteredFederation {
  const samples = parseExposition(answer, FEDERATION_LIMITS);
  const seen = new Set<string>();
  const kept = samples.filter((sample) => {
    if (!allowed(sample, allowance)) return false;
    const key = seriesKey(sample);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { text: formatExposition(kept), kept: kept.length, dropped: samples.length - kept.length };
}
