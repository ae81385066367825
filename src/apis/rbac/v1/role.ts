// Role: a namespaced set of permissions (PolicyRules), granted by RoleBindings in the same namespace.

import type { KindOf } from "../../../apimachinery/schema-builders.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition, TableColumn } from "../../../registry/types.ts";
import { policyRulesSchema, RBAC_GROUP, RBAC_VERSION, type RoleObject, validatePolicyRules } from "./common.ts";

const schema = { rules: policyRulesSchema };

export type Role = KindOf<typeof schema>;

/** kubectl shows roles with their creation time rather than an age. */
export const createdAtColumn: TableColumn<RoleObject> = {
  name: "Created At",
  type: "string",
  format: "date",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  cell: (role) => role.metadata.creationTimestamp ?? "",
};

export const roleDefinition: ResourceDefinition = defineResource({
  group: RBAC_GROUP,
  version: RBAC_VERSION,
  kind: "Role",
  protobuf: { message: "k8s.io.api.rbac.v1.Role" },
  strategicMergePatch: true,
  nameValidation: "path-segment",
  plural: "roles",
  singular: "role",
  namespaced: true,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description:
    "Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.",
  schema,
  strategy: { validate: (role) => validatePolicyRules(role.rules, true) },
  noAgeColumn: true,
  columns: [createdAtColumn],
});
