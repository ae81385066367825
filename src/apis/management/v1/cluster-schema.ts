// Cluster: types and schema. A Cluster is a host cluster connected to the platform through its agent: who may use
// it (access rules with the verb `use`: kubectl through the platform and its direct endpoint), its overrides of the
// Config's per-cluster cost control settings, and what the platform observes of it (online, heartbeat, versions,
// the direct endpoint, the spaces and virtual clusters on it).

import {
  array,
  boolean,
  integer,
  type KindOf,
  number,
  object,
  type Static,
  string,
  stringList,
  timestamp,
} from "../../../apimachinery/schema-builders.ts";
import { clusterCostControlSchema } from "../../../config/schema-cost-control.ts";
import { ownerSchema } from "./common.ts";
import { conditionsSchema } from "./project-schema.ts";

/** Pending: never connected; Ready: its agent is connected; Offline: it was, and is no longer. */
export const CLUSTER_PHASES = ["Pending", "Ready", "Offline"] as const;
/** The verb of an access rule (or ownership, or the admin role) that lets a caller reach the cluster's API. */
export const USE_VERB = "use";

export const clusterSchema = {
  spec: object(
    {
      displayName: string("Name shown in the UI."),
      description: string("Description of the cluster."),
      owner: ownerSchema,
      access: array(
        object(
          {
            name: string("Optional name of the rule."),
            verbs: stringList(
              'Verbs the rule grants on the cluster: "use" reaches its API through the platform and its direct endpoint (the host\'s RBAC then decides), "get" reads the Cluster object, "*" stands for every verb.',
            ),
            subresources: stringList('Subresources the rule applies to. "*" stands for every subresource.'),
            users: stringList('Users the rule applies to. "*" stands for every user.'),
            teams: stringList("Teams the rule applies to."),
          },
          "An access rule granting verbs on this cluster to users and teams.",
          ["verbs"],
        ),
        "Who may use the cluster. Adding a user or team needs the verb bind on it.",
      ),
      costControl: clusterCostControlSchema(
        "Overrides of the Config's status.costControl.cluster settings for this cluster.",
      ),
    },
    "The desired state of the cluster.",
  ),
  status: object(
    {
      phase: string("Pending (never connected), Ready (its agent is connected) or Offline.", {
        enum: [...CLUSTER_PHASES],
      }),
      reason: string("Machine-readable reason for the phase."),
      message: string("Human-readable details of the phase."),
      online: boolean("Whether the cluster's agent is connected to the platform."),
      lastHeartbeatTime: timestamp("Last time the platform heard from the agent."),
      kubernetesVersion: string("Kubernetes version of the cluster's API server."),
      agentVersion: string("Version of the cluster's agent."),
      helmVersion: string(
        "Version of the helm on the agent's machine, which installs HelmReleases; empty: the agent has none, and users run the helm command the console shows.",
      ),
      directEndpoint: object(
        {
          url: string("HTTPS address of the agent's direct endpoint (DirectClusterEndpointTokens)."),
          certificateAuthority: string("PEM CA certificate of the direct endpoint's serving certificate."),
        },
        "Where clients reach the cluster without the platform.",
      ),
      connection: object(
        {
          id: string(
            "Identifier of the agent's current connection: a replica marks the cluster offline only while the connection it lost is the current one.",
          ),
          replica: string("Platform replica holding the connection."),
          since: timestamp("When the connection was made."),
        },
        "The agent's connection to the platform.",
      ),
      spaces: stringList("Spaces on the cluster, as <project>/<space>."),
      virtualClusters: stringList("Virtual clusters the platform created on the cluster, as <project>/<name>."),
      usage: object(
        {
          cpuSeconds: number("CPU seconds the agent used since it started."),
          residentMemoryBytes: integer("Resident memory of the agent, bytes."),
          apiRequests: integer("Requests the agent forwarded to the cluster since it started."),
        },
        "What the agent used, as of its last heartbeat; the platform exposes it as vcp_usage_* series (cost control).",
      ),
      conditions: conditionsSchema,
    },
    "The observed state of the cluster.",
  ),
};

export type Cluster = KindOf<typeof clusterSchema>;
export type ClusterSpec = Static<typeof clusterSchema.spec>;
export type ClusterStatus = Static<typeof clusterSchema.status>;
/** The agent's current tunnel to a platform replica. */
export type ClusterConnection = NonNullable<ClusterStatus["connection"]>;
