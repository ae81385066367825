// ClusterRoleBinding: grants the permissions of a ClusterRole to subjects in every namespace and at cluster scope.

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

export type ClusterRoleBinding = BindingObject;

export const clusterRoleBindingDefinition: ResourceDefinition = defineResource({
  group: RBAC_GROUP,
  version: RBAC_VERSION,
  kind: "ClusterRoleBinding",
  protobuf: { message: "k8s.io.api.rbac.v1.ClusterRoleBinding" },
  strategicMergePatch: true,
  nameValidation: "path-segment",
  plural: "clusterrolebindings",
  singular: "clusterrolebinding",
  namespaced: false,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description:
    "ClusterRoleBinding references a ClusterRole, but not contain it. It can reference a ClusterRole in the global namespace, and adds who information via Subject.",
  schema: bindingSchema("RoleRef can only reference a ClusterRole in the global namespace. This field is immutable."),
  strategy: {
    canonicalize: defaultBinding,
    validate: (binding) => validateBinding(binding, ["ClusterRole"], false),
    validateUpdate: validateRoleRefUpdate,
  },
  noAgeColumn: true,
  columns: bindingColumns,
});
