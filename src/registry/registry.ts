// The set of served resources over one storage: builds a GenericStore per stored resource and an ActionStore per
// create-only resource (or the store a definition brings, for resources kept elsewhere), and answers "which
// resource is this apiVersion/kind" for owner references.

import type { KubeObject } from "../apimachinery/types.ts";
import type { KeyValueStore, StoredRecord } from "../storage/types.ts";
import { ActionStore } from "./action-store.ts";
import { parseKey } from "./keys.ts";
import { GenericStore } from "./store.ts";
import type { ResourceDefinition, ResourceStore, WriteGate } from "./types.ts";

export interface RegistryOptions {
  /** Asked before every write that adds data, in every resource (the platform's store quota). */
  writeGate?: WriteGate;
}

export class Registry {
  readonly storage: KeyValueStore;
  private readonly byResource = new Map<string, ResourceStore>();
  private readonly byKind = new Map<string, ResourceDefinition>();
  private readonly options: RegistryOptions;

  constructor(storage: KeyValueStore, options: RegistryOptions = {}) {
    this.storage = storage;
    this.options = options;
  }

  /** Registers a resource; returns its store. Registering the same group/plural twice is a programming error. */
  register(definition: ResourceDefinition): ResourceStore {
    const id = resourceId(definition.group, definition.plural);
    if (this.byResource.has(id)) throw new Error(`resource ${id} is registered twice`);
    const store = definition.serve
      ? definition.serve(definition)
      : definition.action
        ? new ActionStore(definition)
        : new GenericStore({
            definition,
            storage: this.storage,
            resolveKind: (v, k) => this.definitionForKind(v, k),
            writeGate: this.options.writeGate,
          });
    this.byResource.set(id, store);
    const apiVersion = definition.group ? `${definition.group}/${definition.version}` : definition.version;
    this.byKind.set(`${apiVersion}|${definition.kind}`, definition);
    return store;
  }

  stores(): ResourceStore[] {
    return [...this.byResource.values()];
  }

  /** Stores with storage (the garbage collector's world). */
  genericStores(): GenericStore[] {
    return this.stores().filter((s): s is GenericStore => s instanceof GenericStore);
  }

  store(group: string, plural: string): ResourceStore | undefined {
    return this.byResource.get(resourceId(group, plural));
  }

  genericStore(group: string, plural: string): GenericStore | undefined {
    const store = this.store(group, plural);
    return store instanceof GenericStore ? store : undefined;
  }

  /**
   * A watched record as an object, decoded once for every watcher of the same record (GenericStore.decodeShared):
   * the result is shared, callers must not mutate it. Records of no registered store are parsed on their own.
   */
  decodeShared(record: StoredRecord): KubeObject {
    const parts = parseKey(record.key);
    const store = parts && this.genericStore(parts.group, parts.plural);
    return store ? store.decodeShared(record) : (JSON.parse(record.value) as KubeObject);
  }

  definitionForKind(apiVersion: string, kind: string): ResourceDefinition | undefined {
    return this.byKind.get(`${apiVersion}|${kind}`);
  }
}

function resourceId(group: string, plural: string): string {
  return `${group}/${plural}`;
}
