// Shapes shared by several management.platform.sh/v1 resources.

import { array, object, type Static, string, stringList } from "../../../apimachinery/schema-builders.ts";

export const GROUP = "management.platform.sh";
export const VERSION = "v1";
export const CATEGORY = "platform";

export const ownerSchema = object(
  { user: string("Name of the owning user."), team: string("Name of the owning team.") },
  "Owner of this object: a user or a team.",
);

export const secretRefSchema = (description: string) =>
  object(
    {
      secretName: string("Name of the Secret."),
      secretNamespace: string("Namespace of the Secret."),
      key: string("Key within the Secret's data."),
    },
    description,
  );

export const clusterRolesSchema = array(
  object({ name: string("Name of the cluster role.") }, "A cluster role assigned to the subject.", ["name"]),
  "Cluster roles assigned to the subject.",
);

export const accessSchema = array(
  object(
    {
      name: string("Optional name of the rule."),
      verbs: stringList('Verbs the rule grants; they apply to all kinds in the rule. "*" stands for every verb.'),
      subresources: stringList('Subresources the rule applies to. "*" stands for every subresource.'),
      users: stringList('Users the rule applies to. "*" stands for every user.'),
      teams: stringList("Teams the rule applies to."),
    },
    "An access rule granting verbs on this object to users and teams.",
    ["verbs"],
  ),
  "Access rights of users and teams on this object.",
);

/** Owner of an object: a user or a team. */
export type Owner = Static<typeof ownerSchema>;
/** An access rule of a User, Team or VirtualClusterInstance. */
export type AccessRule = Static<typeof accessSchema>[number];
