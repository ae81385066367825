// SpaceInstance: types and schema. A space is a namespace on a connected cluster owned by a project: the platform
// has the cluster's agent create it with RoleBindings for the project's members (by their project role) and
// reports what the host says in status.

import { type KindOf, object, type Static, string } from "../../../apimachinery/schema-builders.ts";
import { accessSchema, ownerSchema } from "./common.ts";
import { conditionsSchema } from "./project-schema.ts";

/** Pending until the host confirms the namespace; Ready; Failed (message says why); Terminating while deleting. */
export const SPACE_PHASES = ["Pending", "Ready", "Failed", "Terminating"] as const;

export const spaceInstanceSchema = {
  spec: object(
    {
      displayName: string("Name shown in the UI."),
      description: string("Description of the space."),
      owner: ownerSchema,
      clusterRef: object(
        {
          cluster: string("Connected cluster the space lives on (must be allowed by the project). Cannot be changed."),
          namespace: string("Namespace of the space on that cluster. Defaults to the space's name. Cannot be changed."),
        },
        "Where the space lives.",
        ["cluster"],
      ),
      access: accessSchema,
    },
    "The desired state of the space.",
    ["clusterRef"],
  ),
  status: object(
    {
      phase: string("Pending, Ready, Failed or Terminating.", { enum: [...SPACE_PHASES] }),
      reason: string("Machine-readable reason for the phase."),
      message: string("Human-readable details of the phase."),
      conditions: conditionsSchema,
    },
    "The observed state of the space.",
  ),
};

export type SpaceInstance = KindOf<typeof spaceInstanceSchema>;
export type SpaceInstanceSpec = Static<typeof spaceInstanceSchema.spec>;
export type SpaceInstanceStatus = Static<typeof spaceInstanceSchema.status>;
