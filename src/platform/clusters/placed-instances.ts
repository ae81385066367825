// The virtual cluster instances placed on each connected cluster (spec.clusterRef.cluster, not external), by their
// project namespace and name, as the clusters' federation reads them on every scrape (federation-filter.ts: an
// agent reports usage for these alone). Kept current from the store's writes by the informer of cluster-metrics.ts.

import { GROUP } from "../../apis/management/v1/common.ts";
import { projectOfNamespace } from "../../apis/management/v1/project.ts";
import { placedOnCluster, type VirtualClusterInstance } from "../../apis/management/v1/virtualclusterinstance.ts";
import type { StoredRecord, WatchEvent } from "../../storage/types.ts";

export const INSTANCES_PREFIX = `/${GROUP}/virtualclusterinstances/`;

interface Placed {
  cluster: string;
  namespace: string;
  name: string;
}

export class PlacedInstances {
  /** storage key -> where the instance is placed. */
  readonly #placed = new Map<string, Placed>();
  /** cluster -> the storage keys of the instances placed on it. */
  readonly #byCluster = new Map<string, Set<string>>();

  /** Project -> its virtual clusters' names, of the instances placed on `cluster` (`prefix`: the project namespaces'). */
  on(cluster: string, prefix: string): Map<string, Set<string>> {
    const projects = new Map<string, Set<string>>();
    for (const key of this.#byCluster.get(cluster) ?? []) {
      const placed = this.#placed.get(key);
      const project = placed && projectOfNamespace(prefix, placed.namespace);
      if (!placed || !project) continue;
      const names = projects.get(project);
      if (names) names.add(placed.name);
      else projects.set(project, new Set([placed.name]));
    }
    return projects;
  }

  reset(records: StoredRecord[]): void {
    this.#placed.clear();
    this.#byCluster.clear();
    for (const record of records) this.#put(record);
  }

  apply(event: WatchEvent): void {
    this.#remove(event.record.key);
    if (event.type !== "delete") this.#put(event.record);
  }

  #put(record: StoredRecord): void {
    const instance = JSON.parse(record.value) as VirtualClusterInstance;
    if (!placedOnCluster(instance)) return;
    const cluster = instance.spec?.clusterRef?.cluster ?? "";
    const { namespace = "", name = "" } = instance.metadata;
    this.#placed.set(record.key, { cluster, namespace, name });
    let keys = this.#byCluster.get(cluster);
    if (!keys) {
      keys = new Set();
      this.#byCluster.set(cluster, keys);
    }
    keys.add(record.key);
  }

  #remove(key: string): void {
    const placed = this.#placed.get(key);
    if (!placed) return;
    this.#placed.delete(key);
    const keys = this.#byCluster.get(placed.cluster);
    keys?.delete(key);
    if (keys?.size === 0) this.#byCluster.delete(placed.cluster);
  }
}
