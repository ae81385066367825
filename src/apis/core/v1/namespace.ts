// Namespace: a scope for names. Cluster-scoped. Created Active with the `kubernetes` finalizer in spec; deleting one
// marks it Terminating (src/cluster-apiserver/namespace-store.ts) and the namespace controller empties it.

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { validateDns1123Label, validateQualifiedName } from "../../../apimachinery/names.ts";
import { array, type KindOf, object, string, stringList, timestamp } from "../../../apimachinery/schema-builders.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CORE_GROUP, CORE_VERSION, mergedByKey } from "./common.ts";

/** The finalizer every namespace carries in spec until its content is gone. */
export const KUBERNETES_FINALIZER = "kubernetes";
export const NAMESPACE_ACTIVE = "Active";
export const NAMESPACE_TERMINATING = "Terminating";
/** Namespaces the API server keeps (NamespaceLifecycle's immortal namespaces). */
const IMMORTAL = ["default", "kube-system", "kube-public"];

export function isTerminating(namespace: Namespace): boolean {
  return Boolean(namespace.metadata.deletionTimestamp) || namespace.status?.phase === NAMESPACE_TERMINATING;
}

function validateSpecFinalizers(finalizers: string[] | undefined): FieldError[] {
  const errs: FieldError[] = [];
  (finalizers ?? []).forEach((finalizer, i) => {
    const path = `spec.finalizers[${i}]`;
    for (const detail of validateQualifiedName(finalizer)) errs.push(fieldError.invalid(path, finalizer, detail));
    if (finalizer !== KUBERNETES_FINALIZER && !finalizer.includes("/")) {
      errs.push(
        fieldError.invalid(path, finalizer, "name is neither a standard finalizer name nor is it fully qualified"),
      );
    }
  });
  return errs;
}

export const namespaceSchema = {
  spec: object(
    {
      finalizers: stringList(
        "Finalizers is an opaque list of values that must be empty to permanently remove object from storage.",
      ),
    },
    "Spec defines the behavior of the Namespace.",
  ),
  status: object(
    {
      phase: string("Phase is the current lifecycle phase of the namespace: Active or Terminating."),
      conditions: mergedByKey(
        array(
          object(
            {
              type: string("Type of namespace controller condition."),
              status: string("Status of the condition, one of True, False, Unknown."),
              lastTransitionTime: timestamp("Last time the condition transitioned from one status to another."),
              reason: string("Unique, one-word, CamelCase reason for the condition's last transition."),
              message: string("Human-readable message indicating details about last transition."),
            },
            "NamespaceCondition contains details about state of namespace.",
          ),
          "Represents the latest available observations of a namespace's current state.",
          { type: "map", keys: ["type"] },
        ),
        "type",
      ),
    },
    "Status describes the current status of a Namespace.",
  ),
};

export type Namespace = KindOf<typeof namespaceSchema>;

export const namespaceDefinition: ResourceDefinition = defineResource({
  group: CORE_GROUP,
  version: CORE_VERSION,
  kind: "Namespace",
  protobuf: { message: "k8s.io.api.core.v1.Namespace" },
  strategicMergePatch: true,
  plural: "namespaces",
  singular: "namespace",
  shortNames: ["ns"],
  namespaced: false,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description: "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
  schema: namespaceSchema,
  statusSubresource: true,
  strategy: {
    prepareForCreate(namespace) {
      namespace.status = { phase: NAMESPACE_ACTIVE };
      const finalizers = namespace.spec?.finalizers ?? [];
      if (!finalizers.includes(KUBERNETES_FINALIZER)) {
        namespace.spec = { ...namespace.spec, finalizers: [...finalizers, KUBERNETES_FINALIZER] };
      }
    },
    prepareForUpdate(namespace, old) {
      // `kubernetes` stays until the namespace controller has emptied a deleted namespace (upstream only changes
      // spec.finalizers through the finalize subresource). Other finalizers may be added while the namespace lives,
      // and dropped once it is being deleted, to release one whose finalizer nobody serves.
      const kept = old.spec?.finalizers ?? [];
      const wanted = namespace.spec?.finalizers ?? [];
      const finalizers = old.metadata.deletionTimestamp
        ? kept.filter((f) => wanted.includes(f))
        : [...new Set([...wanted, ...(kept.includes(KUBERNETES_FINALIZER) ? [KUBERNETES_FINALIZER] : [])])];
      if (finalizers.length) namespace.spec = { ...namespace.spec, finalizers };
      else if (namespace.spec) delete namespace.spec.finalizers;
    },
    beforeDelete(namespace) {
      if (IMMORTAL.includes(namespace.metadata.name ?? "")) {
        throw errors.forbidden(
          { group: CORE_GROUP, resource: "namespaces" },
          namespace.metadata.name ?? "",
          "this namespace may not be deleted",
        );
      }
    },
    validate(namespace) {
      const errs: FieldError[] = [];
      const name = namespace.metadata.name;
      if (name)
        for (const detail of validateDns1123Label(name)) errs.push(fieldError.invalid("metadata.name", name, detail));
      errs.push(...validateSpecFinalizers(namespace.spec?.finalizers));
      return errs;
    },
  },
  columns: [
    {
      name: "Status",
      type: "string",
      description: "The status of the namespace",
      cell: (namespace) => namespace.status?.phase ?? "",
    },
  ],
  selectableFields: {
    "status.phase": (namespace) => namespace.status?.phase ?? "",
  },
});
