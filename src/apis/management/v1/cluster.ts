// Cluster (cluster-scoped): a host cluster connected to the platform. Its agent dials out to the platform and keeps
// one tunnel open; the platform reports what it sees through the status subresource (phase, online, heartbeat,
// versions, the direct endpoint, the spaces and virtual clusters on it). `clusters/<name>/accesskey` mints the agent's
// key: a key of the caller whose scope allows only connecting the agent of this cluster.

import { fieldError } from "../../../apimachinery/field-errors.ts";
import { validateDns1123Label } from "../../../apimachinery/names.ts";
import { fieldPath } from "../../../config/schema-walk.ts";
import { checkClusterCostControl } from "../../../config/validate-cost-control.ts";
import type { AuthorizationFacts } from "../../../registry/authorization-facts.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ActionHandler, ResourceDefinition } from "../../../registry/types.ts";
import { clusterSchema } from "./cluster-schema.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { accessRulesField, ownerField } from "./granting-fields.ts";

export type { Cluster } from "./cluster-schema.ts";

export interface ClusterDefinitionOptions {
  /** `clusters/<name>/accesskey`: the agent's key (made by the platform's wiring). */
  accessKey?: ActionHandler;
}

/** Owner and access rules grant the cluster's use; the agent key is a credential nothing but its role bounds. */
export const CLUSTER_AUTHORIZATION: AuthorizationFacts = {
  credentials: [{ subresource: "accesskey", verbs: ["create"], boundedBy: false }],
  // Whoever may use a cluster sees it (its status says whether it is online and where its direct endpoint is).
  impliedVerbs: { use: ["get", "watch"] },
  grants: [ownerField(), accessRulesField("spec.access")],
};

export function createClusterDefinition(options: ClusterDefinitionOptions = {}): ResourceDefinition {
  return defineResource({
    group: GROUP,
    version: VERSION,
    kind: "Cluster",
    plural: "clusters",
    singular: "cluster",
    categories: [CATEGORY],
    namespaced: false,
    description:
      "Cluster is a host cluster connected to the platform through its agent. Users allowed to use it reach its API at /kubernetes/cluster/<name> with their own identity.",
    schema: clusterSchema,
    statusSubresource: true,
    authorization: CLUSTER_AUTHORIZATION,
    strategy: {
      prepareForCreate(cluster) {
        cluster.status = { phase: "Pending", online: false };
      },
      validate(cluster) {
        // Cluster names appear in URLs, host labels and namespace names of its agent: a DNS label.
        const name = cluster.metadata.name ?? "";
        const problems = name
          ? validateDns1123Label(name).map((problem) => fieldError.invalid("metadata.name", name, problem))
          : [];
        // The cost control overrides are held to what the Config's costControl.cluster is held to.
        checkClusterCostControl(cluster.spec?.costControl, [], (path, value, detail) =>
          problems.push(fieldError.invalid(fieldPath("spec.costControl", path), value, detail)),
        );
        return problems;
      },
    },
    subresources: options.accessKey ? { accesskey: options.accessKey } : undefined,
    columns: [
      { name: "Display Name", type: "string", description: "Name shown in the UI.", cell: (c) => c.spec?.displayName },
      { name: "Phase", type: "string", description: "Pending, Ready or Offline.", cell: (c) => c.status?.phase ?? "" },
      {
        name: "Online",
        type: "boolean",
        description: "Whether the cluster's agent is connected.",
        cell: (c) => c.status?.online === true,
      },
      {
        name: "Version",
        type: "string",
        description: "Kubernetes version of the cluster.",
        cell: (c) => c.status?.kubernetesVersion ?? "",
      },
      {
        name: "Heartbeat",
        type: "date",
        description: "Time since the platform last heard from the agent.",
        cell: (c) => c.status?.lastHeartbeatTime,
      },
      {
        name: "Spaces",
        type: "integer",
        description: "Number of spaces on the cluster.",
        cell: (c) => c.status?.spaces?.length ?? 0,
      },
      {
        name: "Virtual Clusters",
        type: "integer",
        description: "Number of virtual clusters the platform created on the cluster.",
        cell: (c) => c.status?.virtualClusters?.length ?? 0,
      },
      {
        name: "Direct Endpoint",
        type: "string",
        priority: 1,
        description: "Address of the agent's direct endpoint.",
        cell: (c) => c.status?.directEndpoint?.url ?? "",
      },
    ],
    selectableFields: { "status.phase": (c) => c.status?.phase },
  });
}
