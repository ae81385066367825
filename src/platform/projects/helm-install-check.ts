// Whether a new HelmRelease can be installed by an agent: its target (looked up in its own project namespace) is
// placed on a connected cluster whose agent has helm. A target that does not exist yet is left to the status
// (TargetNotFound), which changes once it does; an agent without helm, or a virtual cluster no agent runs, is a 422
// at once, so kubectl and the console learn before anything is stored that the helm command is the way there.

import { isStatusError } from "../../apimachinery/errors.ts";
import type { KubeObject } from "../../apimachinery/types.ts";
import type { Cluster } from "../../apis/management/v1/cluster-schema.ts";
import type { HelmRelease } from "../../apis/management/v1/helmrelease.ts";
import type { SpaceInstance } from "../../apis/management/v1/spaceinstance.ts";
import { placedOnCluster, type VirtualClusterInstance } from "../../apis/management/v1/virtualclusterinstance.ts";
import type { GenericStore } from "../../registry/store.ts";
import { systemContext } from "../../registry/system-context.ts";

const context = () => systemContext("system:helm-releases", "virtualcluster-platform");

async function found(
  store: GenericStore,
  namespace: string | undefined,
  name: string,
): Promise<KubeObject | undefined> {
  try {
    return await store.get(context(), { namespace, name });
  } catch (error) {
    if (isStatusError(error) && error.reason === "NotFound") return undefined;
    throw error;
  }
}

/** Why no agent can install the release, or undefined when one can (or the target does not exist yet). */
export async function helmInstallProblem(
  store: (plural: string) => GenericStore,
  release: HelmRelease,
): Promise<string | undefined> {
  const namespace = release.metadata.namespace;
  const target = release.spec?.target ?? {};
  let cluster: string | undefined;
  if (target.space) {
    const space = (await found(store("spaceinstances"), namespace, target.space)) as SpaceInstance | undefined;
    if (!space) return undefined;
    cluster = space.spec?.clusterRef?.cluster;
  } else {
    const name = target.virtualClusterInstance ?? "";
    const instance = (await found(store("virtualclusterinstances"), namespace, name)) as
      | VirtualClusterInstance
      | undefined;
    if (!instance) return undefined;
    if (!placedOnCluster(instance)) {
      return `virtual cluster instance "${name}" is not run by a connected cluster's agent: install with the helm command (the console's Apps page shows it)`;
    }
    cluster = instance.spec?.clusterRef?.cluster;
  }
  const object = (await found(store("clusters"), undefined, cluster ?? "")) as Cluster | undefined;
  if (object?.status?.helmVersion) return undefined;
  return `the agent of cluster "${cluster}" has no helm: install helm on its machine (or start the agent with --helm-binary), or install with the helm command (the console's Apps page shows it)`;
}
