// ServiceAccount: an identity for processes that run in pods. Namespaced.

import { array, boolean, type KindOf } from "../../../apimachinery/schema-builders.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CORE_GROUP, CORE_VERSION, localObjectReferenceSchema, mergedByKey, objectReferenceSchema } from "./common.ts";

export const serviceAccountSchema = {
  secrets: mergedByKey(
    array(
      objectReferenceSchema("A reference to a secret of this service account."),
      "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
      { type: "map", keys: ["name"] },
    ),
    "name",
  ),
  imagePullSecrets: array(
    localObjectReferenceSchema("A reference to an image pull secret."),
    "ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling any images in pods that reference this ServiceAccount.",
  ),
  automountServiceAccountToken: boolean(
    "AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted.",
  ),
};

export type ServiceAccount = KindOf<typeof serviceAccountSchema>;

export const serviceAccountDefinition: ResourceDefinition = defineResource({
  group: CORE_GROUP,
  version: CORE_VERSION,
  kind: "ServiceAccount",
  protobuf: { message: "k8s.io.api.core.v1.ServiceAccount" },
  strategicMergePatch: true,
  plural: "serviceaccounts",
  singular: "serviceaccount",
  shortNames: ["sa"],
  namespaced: true,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description:
    "ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, for an identity; a principal that can be authenticated and authorized; a set of secrets.",
  schema: serviceAccountSchema,
  strategy: {},
  columns: [
    {
      name: "Secrets",
      type: "integer",
      description: "The number of secrets of the service account.",
      cell: (sa) => (sa.secrets ?? []).length,
    },
  ],
});
