// Lookup of the served resources by group, version and plural: the first step of dispatching a resource request.

import type { ResourceDefinition, ResourceStore } from "../registry/types.ts";

export interface GroupVersion {
  group: string;
  version: string;
}

export class ResourceIndex {
  readonly definitions: ResourceDefinition[];
  readonly groupVersions: GroupVersion[];
  private readonly byGroup = new Map<string, Map<string, Map<string, ResourceStore>>>();

  constructor(stores: readonly ResourceStore[]) {
    this.definitions = stores.map((store) => store.definition);
    this.groupVersions = [];
    for (const store of stores) {
      const { group, version, plural } = store.definition;
      let versions = this.byGroup.get(group);
      if (!versions) {
        versions = new Map();
        this.byGroup.set(group, versions);
      }
      let resources = versions.get(version);
      if (!resources) {
        resources = new Map();
        versions.set(version, resources);
        this.groupVersions.push({ group, version });
      }
      if (resources.has(plural)) throw new Error(`resource ${plural} registered twice in ${group}/${version}`);
      resources.set(plural, store);
    }
  }

  find(group: string, version: string, resource: string): ResourceStore | undefined {
    return this.byGroup.get(group)?.get(version)?.get(resource);
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.byGroup.get(group)?.has(version) ?? false;
  }

  hasGroup(group: string): boolean {
    return this.byGroup.has(group);
  }
}
