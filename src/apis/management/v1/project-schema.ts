// Project: types and schema. A project groups virtual cluster instances in its namespace `<prefix><name>` and says
// who may use them (members with a project role) and where they may run (allowedClusters).

import { array, type KindOf, object, type Static, string, timestamp } from "../../../apimachinery/schema-builders.ts";
import { descriptionSchema, displayNameSchema, ownerSchema } from "./common.ts";

/** Project roles, weakest first: view reads instances, edit also writes them, admin also edits the project. */
export const PROJECT_ROLES = ["view", "edit", "admin"] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];
/** A member listed without a role gets the least one. */
export const DEFAULT_PROJECT_ROLE: ProjectRole = "view";
export const MEMBER_KINDS = ["User", "Team"] as const;

/** Holds a deleting project until its namespace has no virtual cluster instances left. */
export const PROJECT_FINALIZER = "management.platform.sh/instances";
/** Condition of a deleting project whose instances remain (the message lists them). */
export const INSTANCES_REMAINING = "InstancesRemaining";

export const conditionsSchema = array(
  object(
    {
      type: string("Type of the condition."),
      status: string("True, False or Unknown.", { enum: ["True", "False", "Unknown"] }),
      reason: string("Machine-readable reason of the last transition."),
      message: string("Human-readable details."),
      lastTransitionTime: timestamp("When the status last changed."),
    },
    "An observation of one aspect of the object's state.",
    ["type", "status"],
  ),
  "Observations of the object's state.",
  { type: "map", keys: ["type"] },
);

export const projectSchema = {
  spec: object(
    {
      displayName: displayNameSchema,
      description: descriptionSchema("Description of the project."),
      owner: ownerSchema,
      members: array(
        object(
          {
            kind: string("User or Team. Defaults to User.", { enum: [...MEMBER_KINDS] }),
            name: string("Object name of the user or team."),
            clusterRole: string(
              "Project role: view (read instances), edit (also create, change and delete instances and get their kubeconfigs) or admin (also change the project). Defaults to view.",
              { enum: [...PROJECT_ROLES] },
            ),
          },
          "A user or team with a role in the project.",
          ["name"],
        ),
        "Users and teams that may use the project's virtual cluster instances.",
      ),
      allowedClusters: array(
        object({ name: string('Name of a connected cluster; "*" allows every cluster.') }, "A cluster.", ["name"]),
        "Clusters the project's instances may run on (spec.clusterRef.cluster); empty allows every cluster.",
      ),
    },
    "The desired state of the project.",
  ),
  status: object(
    {
      phase: string("Active, or Terminating while a deletion waits for the project's instances to be deleted."),
      conditions: conditionsSchema,
    },
    "The observed state of the project.",
  ),
};

export type Project = KindOf<typeof projectSchema>;
export type ProjectSpec = Static<typeof projectSchema.spec>;
export type ProjectMember = NonNullable<ProjectSpec["members"]>[number];
export type ProjectStatus = Static<typeof projectSchema.status>;
/** A condition of a project or an instance. */
export type Condition = Static<typeof conditionsSchema>[number];
