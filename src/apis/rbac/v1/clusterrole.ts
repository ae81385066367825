// ClusterRole: a cluster-wide set of permissions, granted by ClusterRoleBindings (everywhere) or RoleBindings
// (in one namespace). May also name non-resource URLs.

import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { RBAC_GROUP, RBAC_VERSION, type RoleObject, roleSchema, validatePolicyRules } from "./common.ts";
import { createdAtColumn } from "./role.ts";

export type ClusterRole = RoleObject;

export const clusterRoleDefinition: ResourceDefinition = defineResource({
  group: RBAC_GROUP,
  version: RBAC_VERSION,
  kind: "ClusterRole",
  protobuf: { message: "k8s.io.api.rbac.v1.ClusterRole" },
  strategicMergePatch: true,
  nameValidation: "path-segment",
  plural: "clusterroles",
  singular: "clusterrole",
  namespaced: false,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description:
    "ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.",
  schema: roleSchema,
  strategy: { validate: (role) => validatePolicyRules(role.rules, false) },
  noAgeColumn: true,
  columns: [createdAtColumn],
});
