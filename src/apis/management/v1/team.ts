// Team: a set of users (listed, or matched by group) that shares cluster roles and access. Cluster-scoped.
// A user's effective groups are its own groups plus the names of its teams.

import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { accessRulesField, ownerField, privilegedField, userListField } from "./granting-fields.ts";
import { teamSchema } from "./team-schema.ts";

export type { Team, TeamSpec } from "./team-schema.ts";

/**
 * Listing a user makes it a member (bind on it); changing who else holds the team's rights, or what they are, needs
 * `escalate` (the admin role): groups, cluster roles, access rules, the owner and the username.
 */
const TEAM_GRANTS = [
  userListField("spec.users"),
  privilegedField("spec.groups", ["granted"]),
  privilegedField("spec.clusterRoles", [{ name: "admin" }]),
  accessRulesField("spec.access", { escalate: true }),
  ownerField({ escalate: true }),
  privilegedField("spec.username", "granted-name"),
];

export const teamDefinition: ResourceDefinition = defineResource({
  group: GROUP,
  version: VERSION,
  kind: "Team",
  plural: "teams",
  singular: "team",
  categories: [CATEGORY],
  namespaced: false,
  description: "Team is a group of users that shares cluster roles and access rights.",
  schema: teamSchema,
  authorization: {
    // Members read their teams.
    ownerRights: { holder: "member", verbs: ["get", "list", "watch"] },
    grants: TEAM_GRANTS,
  },
  strategy: {
    canonicalize(team) {
      if (team.spec?.users) team.spec.users = [...new Set(team.spec.users)];
      if (team.spec?.groups) team.spec.groups = [...new Set(team.spec.groups)];
    },
    prepareForCreate(team) {
      team.spec ??= {};
      team.spec.username ||= team.metadata.name ?? undefined;
    },
  },
  columns: [
    {
      name: "Display Name",
      type: "string",
      description: "Name shown in the UI.",
      cell: (t) => t.spec?.displayName,
    },
    {
      name: "Users",
      type: "string",
      description: "Users who are members of the team.",
      cell: (t) => (t.spec?.users ?? []).join(","),
    },
    {
      name: "Groups",
      type: "string",
      priority: 1,
      description: "Groups whose members are members of the team.",
      cell: (t) => (t.spec?.groups ?? []).join(","),
    },
  ],
});
