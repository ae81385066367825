// The JSON schema of ObjectMeta (the "Common metadata" table of the specification), shared by every resource.
// It is valid for ajv (draft-07 subset) and as an OpenAPI v3 schema, so `kubectl explain <kind>.metadata` works.

import type { JsonMap } from "./types.ts";

const str = (description: string): JsonMap => ({ type: "string", description });
const int64 = (description: string): JsonMap => ({ type: "integer", format: "int64", description });
const timestamp = (description: string, nullable = false): JsonMap => {
  const schema: JsonMap = { type: "string", format: "date-time", description };
  // Clients send `creationTimestamp: null` (kubectl create --dry-run -o yaml prints it), which must be accepted.
  if (nullable) schema.nullable = true;
  return schema;
};
const stringMap = (description: string): JsonMap => ({
  type: "object",
  description,
  additionalProperties: { type: "string" },
});

const ownerReference: JsonMap = {
  type: "object",
  description:
    "OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped, so there is no namespace field.",
  required: ["apiVersion", "kind", "name", "uid"],
  properties: {
    apiVersion: str("API version of the referent."),
    kind: str("Kind of the referent."),
    name: str("Name of the referent."),
    uid: str("UID of the referent."),
    controller: {
      type: "boolean",
      description:
        "If true, this reference points to the managing controller. At most one reference may be a controller.",
    },
    blockOwnerDeletion: {
      type: "boolean",
      description:
        'If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed. Defaults to false. Setting it requires delete permission on the owner, otherwise 422 (Unprocessable Entity) is returned.',
    },
  },
};

const managedFieldsEntry: JsonMap = {
  type: "object",
  description:
    "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.",
  properties: {
    manager: str("Manager is an identifier of the workflow managing these fields."),
    operation: str(
      "Operation is the type of operation which lead to this ManagedFieldsEntry being created. The only valid values for this field are 'Apply' and 'Update'.",
    ),
    apiVersion: str(
      'APIVersion defines the version of this resource that this field set applies to. The format is "group/version" just like the top-level APIVersion field.',
    ),
    time: timestamp(
      "Time is the timestamp of when the ManagedFields entry was added. The timestamp will also be updated if a field is added, the manager changes any of the owned fields value or removes a field.",
    ),
    fieldsType: str(
      'FieldsType is the discriminator for the different fields format and version. There is currently only one possible value: "FieldsV1".',
    ),
    fieldsV1: {
      type: "object",
      description: 'FieldsV1 holds the first JSON version format as described in the "FieldsV1" type.',
      "x-kubernetes-preserve-unknown-fields": true,
    },
    subresource: str(
      "Subresource is the name of the subresource used to update that object, or empty string if the object was updated through the main resource.",
    ),
  },
};

export const objectMetaSchema: JsonMap = {
  type: "object",
  description:
    "Standard object's metadata: ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
  properties: {
    name: str(
      "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.",
    ),
    generateName: str(
      "GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided. If this field is used, the name returned to the client will be different than the name passed. The provided value has the same validation rules as the Name field, and may be truncated by the length of the suffix required to make the value unique on the server. If this field is specified and the generated name exists, the server will return a 409.",
    ),
    namespace: str(
      'Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "default" namespace, but "default" is the canonical representation. Not all objects are required to be scoped to a namespace - the value of this field for those objects will be empty. Must be a DNS_LABEL. Cannot be updated.',
    ),
    selfLink: str("Deprecated: selfLink is a legacy read-only field that is no longer populated by the system."),
    uid: str(
      "UID is the unique in time and space value for this object. It is typically generated by the server on successful creation of a resource and is not allowed to change on PUT operations. Populated by the system. Read-only.",
    ),
    resourceVersion: str(
      "An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. May be used for optimistic concurrency, change detection, and the watch operation on a resource or set of resources. Clients must treat these values as opaque and passed unmodified back to the server. Populated by the system. Read-only.",
    ),
    generation: int64(
      "A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.",
    ),
    creationTimestamp: timestamp(
      "CreationTimestamp is a timestamp representing the server time when this object was created. It is represented in RFC3339 form and is in UTC. Populated by the system. Read-only. Null for lists.",
      true,
    ),
    deletionTimestamp: timestamp(
      "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. This field is set by the server when a graceful deletion is requested by the user, and is not directly settable by a client. Once the deletionTimestamp is set, this value may not be unset or be set further into the future, although it may be shortened or the resource may be deleted prior to this time. The resource is removed once the finalizers list is empty. Populated by the system when a graceful deletion is requested. Read-only.",
    ),
    deletionGracePeriodSeconds: int64(
      "Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set. May only be shortened. Read-only.",
    ),
    labels: stringMap(
      "Map of string keys and values that can be used to organize and categorize (scope and select) objects. May match selectors of replication controllers and services.",
    ),
    annotations: stringMap(
      "Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable and should be preserved when modifying objects.",
    ),
    ownerReferences: {
      type: "array",
      description:
        "List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected. If this object is managed by a controller, then an entry in this list will point to this controller, with the controller field set to true. There cannot be more than one managing controller.",
      items: ownerReference,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["uid"],
    },
    finalizers: {
      type: "array",
      description:
        "Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list. If the deletionTimestamp of the object is non-nil, entries in this list can only be removed. Finalizers may be processed and removed in any order.",
      items: { type: "string" },
      "x-kubernetes-list-type": "set",
    },
    managedFields: {
      type: "array",
      description:
        "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow. This is mostly for internal housekeeping, and users typically shouldn't need to set or understand this field.",
      items: managedFieldsEntry,
      "x-kubernetes-list-type": "atomic",
    },
  },
};
