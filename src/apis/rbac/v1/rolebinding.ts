// RoleBinding: grants the permissions of a Role (same namespace) or ClusterRole to subjects, within its namespace.
// roleRef cannot change; delete and recreate the binding instead.

import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { bindingColumns } from "./binding-columns.ts";
import {
  type BindingObject,
  bindingSchema,
  defaultBinding,
  RBAC_GROUP,
  RBAC_VERSION,
  validateBinding,
  validateRoleRefUpdate,
} from "./common.ts";

export type RoleBinding = BindingObject;

export const roleBindingDefinition: ResourceDefinition = defineResource({
  group: RBAC_GROUP,
  version: RBAC_VERSION,
  kind: "RoleBinding",
  protobuf: { message: "k8s.io.api.rbac.v1.RoleBinding" },
  strategicMergePatch: true,
  nameValidation: "path-segment",
  plural: "rolebindings",
  singular: "rolebinding",
  namespaced: true,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description:
    "RoleBinding references a role, but does not contain it. It can reference a Role in the same namespace or a ClusterRole in the global namespace.",
  schema: bindingSchema(
    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. This field is immutable.",
  ),
  strategy: {
    canonicalize: defaultBinding,
    validate: (binding) => validateBinding(binding, ["Role", "ClusterRole"], true),
    validateUpdate: validateRoleRefUpdate,
  },
  noAgeColumn: true,
  columns: bindingColumns,
});
