// Event (core/v1): a report of something that happened to an object (involvedObject). Namespaced: events about
// cluster-scoped objects live in `default`.

import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { integer, type KindOf, object, string, timestamp } from "../../../apimachinery/schema-builders.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CORE_GROUP, CORE_VERSION, objectReferenceSchema } from "./common.ts";

export const EVENT_TYPES = ["Normal", "Warning"] as const;

const microTime = (description: string) => string(description, { format: "date-time" });

function validateEvent(event: Event): FieldError[] {
  const errs: FieldError[] = [];
  const involved = event.involvedObject?.namespace ?? "";
  const namespace = event.metadata.namespace ?? "";
  // Events about cluster-scoped objects go to `default` (older clients) or carry no namespace.
  const matches = involved === "" ? namespace === "" || namespace === "default" : involved === namespace;
  if (!matches) errs.push(fieldError.invalid("involvedObject.namespace", involved, "does not match event.namespace"));
  if (event.type !== undefined && !(EVENT_TYPES as readonly string[]).includes(event.type)) {
    errs.push(fieldError.notSupported("type", event.type, EVENT_TYPES));
  }
  if (event.count !== undefined && event.count < 0)
    errs.push(fieldError.invalid("count", event.count, "must be greater than or equal to 0"));
  if (event.message !== undefined && Buffer.byteLength(event.message) > 4096)
    errs.push(fieldError.tooLong("message", 4096));
  return errs;
}

const lastSeen = (e: Event) => e.lastTimestamp || e.firstTimestamp || e.eventTime || e.metadata.creationTimestamp;
const firstSeen = (e: Event) => e.firstTimestamp || e.eventTime || e.metadata.creationTimestamp;

export const eventSchema = {
  involvedObject: objectReferenceSchema("The object that this event is about."),
  reason: string(
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  ),
  message: string("A human-readable description of the status of this operation."),
  source: object(
    {
      component: string("Component from which the event is generated."),
      host: string("Node name on which the event is generated."),
    },
    "The component reporting this event.",
  ),
  firstTimestamp: timestamp("The time at which the event was first recorded."),
  lastTimestamp: timestamp("The time at which the most recent occurrence of this event was recorded."),
  count: integer("The number of times this event has occurred.", { format: "int32" }),
  type: string("Type of this event (Normal, Warning), new types could be added in the future."),
  eventTime: microTime("Time when this Event was first observed."),
  series: object(
    {
      count: integer("Number of occurrences in this series up to the last heartbeat time.", { format: "int32" }),
      lastObservedTime: microTime("Time of the last occurrence observed."),
    },
    "Data about the Event series this event represents.",
  ),
  action: string("What action was taken/failed regarding to the Regarding object."),
  related: objectReferenceSchema("Optional secondary object for more complex actions."),
  reportingComponent: string("Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`."),
  reportingInstance: string("ID of the controller instance, e.g. `kubelet-xyzf`."),
};

export type Event = KindOf<typeof eventSchema>;

export const eventDefinition: ResourceDefinition = defineResource({
  group: CORE_GROUP,
  version: CORE_VERSION,
  kind: "Event",
  protobuf: { message: "k8s.io.api.core.v1.Event" },
  strategicMergePatch: true,
  plural: "events",
  singular: "event",
  shortNames: ["ev"],
  namespaced: true,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description: "Event is a report of an event somewhere in the cluster.",
  schema: eventSchema,
  strategy: { validate: validateEvent },
  noAgeColumn: true,
  columns: [
    { name: "Last Seen", type: "date", description: "Time of the most recent occurrence.", cell: lastSeen },
    { name: "Type", type: "string", description: "Type of this event (Normal, Warning).", cell: (e) => e.type },
    { name: "Reason", type: "string", description: "Why the event happened.", cell: (e) => e.reason },
    {
      name: "Object",
      type: "string",
      description: "The object that this event is about.",
      cell: (e) => `${(e.involvedObject?.kind ?? "").toLowerCase()}/${e.involvedObject?.name ?? ""}`,
    },
    {
      name: "Subobject",
      type: "string",
      priority: 1,
      description: "The part of the object the event is about.",
      cell: (e) => e.involvedObject?.fieldPath ?? "",
    },
    {
      name: "Source",
      type: "string",
      priority: 1,
      description: "The component reporting this event.",
      cell: (e) =>
        [e.source?.component || e.reportingComponent, e.source?.host || e.reportingInstance].filter(Boolean).join(", "),
    },
    { name: "Message", type: "string", description: "A human-readable description.", cell: (e) => e.message },
    { name: "First Seen", type: "date", priority: 1, description: "Time of the first occurrence.", cell: firstSeen },
    { name: "Count", type: "integer", priority: 1, description: "Number of occurrences.", cell: (e) => e.count ?? 1 },
  ],
  selectableFields: {
    "involvedObject.kind": (e) => e.involvedObject?.kind ?? "",
    "involvedObject.namespace": (e) => e.involvedObject?.namespace ?? "",
    "involvedObject.name": (e) => e.involvedObject?.name ?? "",
    "involvedObject.uid": (e) => e.involvedObject?.uid ?? "",
    "involvedObject.apiVersion": (e) => e.involvedObject?.apiVersion ?? "",
    "involvedObject.resourceVersion": (e) => e.involvedObject?.resourceVersion ?? "",
    "involvedObject.fieldPath": (e) => e.involvedObject?.fieldPath ?? "",
    reason: (e) => e.reason ?? "",
    reportingComponent: (e) => e.reportingComponent ?? "",
    source: (e) => e.source?.component ?? "",
    type: (e) => e.type ?? "",
  },
});
