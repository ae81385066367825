// `clusters/<name>/accesskey` (create): the key a cluster's agent connects with. It is a new access key of the caller
// (made through the ownedaccesskeys store with the caller's own context, so ownership, limits and the issuer stamp
// apply as to any key the caller makes) whose scope allows only the role `agent` of this cluster: opening its tunnel.
// Owned by the Cluster (deleting the cluster deletes it); an earlier agent key of the cluster is revoked, so one key
// connects a cluster at a time.

import { string } from "../../../apimachinery/schema-builders.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import type { GenericStore } from "../../../registry/store.ts";
import { systemContext } from "../../../registry/system-context.ts";
import type { ActionHandler } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";
import { SCOPE_ROLES } from "./ownedaccesskey-schema.ts";

/** On agent keys: the cluster they connect. */
export const CLUSTER_KEY_LABEL = "management.platform.sh/cluster";
const MANAGER = "clusters-accesskey";

export function clusterAccessKeySubresource(keys: () => GenericStore): ActionHandler {
  return {
    kind: "ClusterAccessKey",
    description:
      "The access key a cluster's agent connects with (shown once). Its scope allows only connecting this cluster's agent; earlier agent keys of the cluster stop working.",
    schema: {
      accessKey: string("The access key (shown only in this answer)."),
      accessKeyName: string("Name of the OwnedAccessKey holding it."),
    },
    verbs: ["create"],
    async handle({ context, parent }) {
      const { name = "", uid = "" } = parent?.metadata ?? {};
      const store = keys();
      const created = await store.create(
        context,
        undefined,
        {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: "OwnedAccessKey",
          metadata: {
            generateName: `cluster-agent-${name.slice(0, 40).replace(/[-.]+$/, "")}-`,
            labels: { [CLUSTER_KEY_LABEL]: name },
            ownerReferences: [{ apiVersion: `${GROUP}/${VERSION}`, kind: "Cluster", name, uid }],
          },
          spec: {
            type: "User",
            displayName: `Agent of cluster ${name}`,
            description: `Connects the agent of cluster ${name} to the platform; nothing else. Delete it to disconnect the agent.`,
            scope: { roles: [{ role: SCOPE_ROLES.agent, clusters: [name] }] },
          },
        },
        { fieldManager: MANAGER },
      );
      await revokeOthers(store, name, created.metadata.name ?? "");
      const response: KubeObject = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "ClusterAccessKey",
        metadata: { name },
        accessKey: (created.spec as { key: string }).key,
        accessKeyName: created.metadata.name,
      };
      return response;
    },
  };
}

/** Earlier agent keys of the cluster, whoever made them. */
async function revokeOthers(store: GenericStore, cluster: string, keep: string): Promise<void> {
  const system = systemContext("system:cluster-accesskey", MANAGER);
  const list = await store.list(system, { labelSelector: `${CLUSTER_KEY_LABEL}=${cluster}` });
  for (const key of list.items) {
    if (key.metadata.name === keep) continue;
    await store
      .delete(system, { name: key.metadata.name ?? "" }, { preconditions: { uid: key.metadata.uid } })
      .catch(() => {});
  }
}
