// VirtualClusterInstance: types and schema. An instance is a virtual cluster registered with the platform, living in
// its project's namespace; the virtual cluster reports its state into status through the status subresource.

import {
  boolean,
  integer,
  type KindOf,
  number,
  object,
  type Static,
  string,
  timestamp,
} from "../../../apimachinery/schema-builders.ts";
import { accessSchema, descriptionSchema, displayNameSchema, ownerSchema } from "./common.ts";
import { conditionsSchema } from "./project-schema.ts";

export const INSTANCE_PHASES = ["Pending", "Ready", "Failed", "Sleeping"] as const;

export const virtualClusterInstanceSchema = {
  spec: object(
    {
      displayName: displayNameSchema,
      description: descriptionSchema("Description of the virtual cluster."),
      owner: ownerSchema,
      runtime: object(
        {
          user: string("Name of the user whose runtime keys report for the instance."),
          team: string("Name of the team whose runtime keys report for the instance."),
        },
        'Whose virtual cluster runtime reports for this instance: only access keys with the role "virtualcluster" owned by this user or team may write its status and hand over its audit events. Set when the instance is registered (to the owner of the registering key, or to the user creating it); naming another user or team needs makeowner on it.',
      ),
      clusterRef: object(
        {
          cluster: string("Connected cluster the virtual cluster runs on (must be allowed by the project)."),
          namespace: string("Namespace of the virtual cluster on that cluster."),
          virtualCluster: string("Name of the virtual cluster on that cluster."),
        },
        "Where the virtual cluster runs.",
      ),
      external: boolean("True when the virtual cluster was deployed outside the platform and registered itself."),
      networkPeer: boolean("Whether the virtual cluster joins the platform's network peering."),
      template: object(
        {
          accessPoint: object(
            {
              ingress: object(
                {
                  enabled: boolean("Whether the virtual cluster is reachable through an ingress."),
                  host: string(
                    "Host name (with an optional :port, without scheme) under which the ingress serves the virtual cluster's API. Kubeconfigs point to https://<host>.",
                  ),
                },
                "Ingress endpoint of the virtual cluster; kubeconfigs are available only when it is enabled with a host.",
              ),
            },
            "How clients reach the virtual cluster.",
          ),
        },
        "Desired shape of the virtual cluster.",
      ),
      access: accessSchema,
    },
    "The desired state of the virtual cluster instance.",
  ),
  status: object(
    {
      phase: string("Pending, Ready, Failed or Sleeping.", { enum: [...INSTANCE_PHASES] }),
      reason: string("Machine-readable reason for the phase."),
      message: string("Human-readable details of the phase."),
      serviceUID: string("Uid of the virtual cluster's Service on its host cluster."),
      kubernetesVersion: string("Kubernetes version the virtual cluster serves."),
      online: boolean("Whether the virtual cluster is connected to the platform."),
      lastHeartbeatTime: timestamp("Last time the virtual cluster reported to the platform."),
      conditions: conditionsSchema,
      serverCertificateAuthority: string(
        "PEM CA certificate of the virtual cluster's API server, reported by the virtual cluster; kubeconfigs trust it.",
      ),
      clientCertificateAuthority: string(
        "PEM certificate of the CA the platform signs client certificates for this virtual cluster with. Set by the platform; its private key never leaves the platform.",
      ),
      usage: object(
        {
          cpuSeconds: number("CPU seconds the runtime used since it started."),
          residentMemoryBytes: integer("Resident memory of the runtime, bytes."),
          syncedObjects: integer("Objects the syncer keeps in sync."),
          apiRequests: integer("API requests the virtual cluster served since the runtime started."),
          storageBytes: integer("Bytes of the virtual cluster's store on disk."),
        },
        "What the runtime used, as of its last heartbeat; the platform exposes it as vcp_usage_* series (cost control).",
      ),
    },
    "The observed state of the virtual cluster instance.",
  ),
};

export type VirtualClusterInstance = KindOf<typeof virtualClusterInstanceSchema>;
export type VirtualClusterInstanceSpec = Static<typeof virtualClusterInstanceSchema.spec>;
export type VirtualClusterInstanceStatus = Static<typeof virtualClusterInstanceSchema.status>;
/** The user or team whose virtual cluster runtime reports for an instance. */
export type RuntimeOwner = NonNullable<VirtualClusterInstanceSpec["runtime"]>;
/** What a runtime used, as of its last heartbeat (cost control). */
export type InstanceUsage = NonNullable<VirtualClusterInstanceStatus["usage"]>;
