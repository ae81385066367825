// Connected clusters and spaces, wired: the Cluster definition with its agent-key subresource, the SpaceInstance
// definition with the project and cluster lookups it checks placements against. `definitions` are registered with
// the rest (src/platform/management-resources.ts); `attach` gives the lookups the registry once it is complete.

import { isStatusError } from "../../apimachinery/errors.ts";
import { createClusterDefinition } from "../../apis/management/v1/cluster.ts";
import { clusterAccessKeySubresource } from "../../apis/management/v1/cluster-accesskey.ts";
import { GROUP } from "../../apis/management/v1/common.ts";
import type { ClusterLookup, ProjectLookup } from "../../apis/management/v1/project-placement.ts";
import type { Project } from "../../apis/management/v1/project-schema.ts";
import { createSpaceInstanceDefinition } from "../../apis/management/v1/spaceinstance.ts";
import type { LiveSettings } from "../../config/settings.ts";
import type { Registry } from "../../registry/registry.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";
import type { ResourceDefinition } from "../../registry/types.ts";

export interface ClusterDefinitions {
  clusters: ResourceDefinition;
  spaces: ResourceDefinition;
}

export interface ClusterResources {
  definitions: ClusterDefinitions;
  /** Existence of clusters, for the placements of virtual cluster instances too. */
  clusterLookup: ClusterLookup;
  attach(registry: Registry): void;
}

const lookupContext = () => systemContext("system:clusters", "virtualcluster-platform");

/** The object, or undefined when it does not exist. */
async function found<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isStatusError(error) && error.reason === "NotFound") return undefined;
    throw error;
  }
}

export function createClusterResources(settings: LiveSettings): ClusterResources {
  let registry: Registry | undefined;
  const store = (plural: string): GenericStore => {
    const found = registry?.genericStore(GROUP, plural);
    if (!found) throw new Error(`${plural} is not registered`);
    return found;
  };
  const clusterLookup: ClusterLookup = {
    exists: async (name) => (await found(() => store("clusters").get(lookupContext(), { name }))) !== undefined,
  };
  const projectLookup: ProjectLookup = {
    namespacePrefix: () => settings.current().projectNamespacePrefix,
    project: async (name) =>
      (await found(() => store("projects").get(lookupContext(), { name }))) as Project | undefined,
  };
  return {
    definitions: {
      clusters: createClusterDefinition({ accessKey: clusterAccessKeySubresource(() => store("ownedaccesskeys")) }),
      spaces: createSpaceInstanceDefinition({ ...projectLookup, clusters: clusterLookup }),
    },
    clusterLookup,
    attach(target) {
      registry = target;
    },
  };
}
