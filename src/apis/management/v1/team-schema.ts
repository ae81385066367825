// Team: schema and the types derived from it (no run-time imports beyond the builders: the console imports these
// types). A team is a set of users (listed, or matched by group) that shares cluster roles and access.

import {
  type KindOf,
  object,
  openObject,
  type Static,
  string,
  stringList,
} from "../../../apimachinery/schema-builders.ts";
import { accessSchema, clusterRolesSchema, descriptionSchema, displayNameSchema, ownerSchema } from "./common.ts";

export const teamSchema = {
  spec: object(
    {
      displayName: displayNameSchema,
      description: descriptionSchema("Description of the team."),
      owner: ownerSchema,
      username: string("Name of the team as used in logins and kubeconfigs. Defaults to the object's name."),
      users: stringList("Users (by object name) who are members of the team."),
      groups: stringList("Groups whose members are members of the team."),
      clusterRoles: clusterRolesSchema,
      access: accessSchema,
    },
    "The desired state of the team.",
  ),
  status: openObject("The observed state of the team."),
};

export type Team = KindOf<typeof teamSchema>;
export type TeamSpec = Static<typeof teamSchema.spec>;
