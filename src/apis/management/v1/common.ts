// Shapes shared by several management.platform.sh/v1 resources.

import { array, object, type Static, string, stringList } from "../../../apimachinery/schema-builders.ts";

export const GROUP = "management.platform.sh";
export const VERSION = "v1";
export const CATEGORY = "platform";

/**
 * Free text a user may write about himself or his objects, bounded (in characters) so no object becomes a load on
 * every read: README "Limits" and SECURITY.md state them. Annotations have Kubernetes' own 256 KiB in total.
 */
export const TEXT_LIMITS = { displayName: 256, description: 16_384, icon: 65_536, email: 254 } as const;

export const displayNameSchema = string(`Name shown in the UI (at most ${TEXT_LIMITS.displayName} characters).`, {
  maxLength: TEXT_LIMITS.displayName,
});

export const descriptionSchema = (description: string) =>
  string(`${description} At most ${TEXT_LIMITS.description} characters.`, { maxLength: TEXT_LIMITS.description });

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
