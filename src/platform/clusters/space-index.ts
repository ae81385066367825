// The spaces on each connected cluster by their host namespace, as the cluster proxy reads them on every request a
// space's member sends (no request reads storage to find a space). Kept current by a StoreInformer.

import { GROUP } from "../../apis/management/v1/common.ts";
import { type SpaceInstance, spaceNamespace } from "../../apis/management/v1/spaceinstance.ts";
import type { InformerHandler } from "../../auth/store-informer.ts";
import type { StoredRecord, WatchEvent } from "../../storage/types.ts";

export interface SpaceEntry {
  /** The SpaceInstance's name and (project) namespace on the platform. */
  name: string;
  projectNamespace: string;
}

const PREFIX = `/${GROUP}/spaceinstances/`;

export class SpaceIndex implements InformerHandler {
  readonly prefixes = [PREFIX];
  /** cluster -> host namespace -> space. */
  readonly #byCluster = new Map<string, Map<string, SpaceEntry>>();
  /** storage key -> where it is indexed, to remove it again. */
  readonly #placed = new Map<string, { cluster: string; namespace: string }>();

  /** The space whose namespace on `cluster` is `namespace`. */
  find(cluster: string, namespace: string): SpaceEntry | undefined {
    return this.#byCluster.get(cluster)?.get(namespace);
  }

  /** Every space on `cluster`. */
  on(cluster: string): Iterable<SpaceEntry> {
    return this.#byCluster.get(cluster)?.values() ?? [];
  }

  reset(records: StoredRecord[]): void {
    this.#byCluster.clear();
    this.#placed.clear();
    for (const record of records) this.#put(record);
  }

  apply(event: WatchEvent): void {
    this.#remove(event.record.key);
    if (event.type !== "delete") this.#put(event.record);
  }

  #put(record: StoredRecord): void {
    const space = JSON.parse(record.value) as SpaceInstance;
    const cluster = space.spec?.clusterRef?.cluster;
    const namespace = spaceNamespace(space);
    if (!cluster || !namespace) return;
    let spaces = this.#byCluster.get(cluster);
    if (!spaces) {
      spaces = new Map();
      this.#byCluster.set(cluster, spaces);
    }
    // Two spaces claiming one namespace: the first keeps it (the agent refuses the second).
    if (spaces.has(namespace)) return;
    spaces.set(namespace, { name: space.metadata.name ?? "", projectNamespace: space.metadata.namespace ?? "" });
    this.#placed.set(record.key, { cluster, namespace });
  }

  #remove(key: string): void {
    const placed = this.#placed.get(key);
    if (!placed) return;
    this.#placed.delete(key);
    this.#byCluster.get(placed.cluster)?.delete(placed.namespace);
  }
}
