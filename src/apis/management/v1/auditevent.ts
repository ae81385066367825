// AuditEvent (`auditevents`, cluster-scoped, read-only: get and list; admins only): the audit events kept in the
// platform's audit datastore, from the platform itself and from its connected virtual clusters. An object is one
// stage of one request: metadata.name is the audit ID (a `get` answers the request's last stored stage), `event` is
// the audit.k8s.io/v1 Event exactly as the audit log file has it (credentials redacted), `instance` names the
// virtual cluster instance ("<namespace>/<name>") it came from, absent for the platform's own. Lists are newest
// first and page with limit/continue; the field selectors are listed in AUDIT_EVENT_FIELDS. The store that serves
// them is composed by the platform (src/platform/audit-event-store.ts) over the audit datastore.

import { defineResource } from "../../../registry/define-resource.ts";
import { type AuditEvent, auditEventSchema } from "./auditevent-schema.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";

export {
  AUDIT_EVENT_BATCH_KIND,
  type AuditEvent,
  type AuditEventBody,
  auditEventBatchSchema,
} from "./auditevent-schema.ts";

/**
 * Field selectors of `auditevents` lists (= and ==; != on all but the time bounds). `since` and `until` bound the
 * event's stageTimestamp (since inclusive, until exclusive) with an RFC 3339 time or a duration back from now
 * (`90s`, `15m`, `2h`, `7d`).
 */
export const AUDIT_EVENT_FIELDS = [
  "metadata.name",
  "auditID",
  "user.username",
  "verb",
  "objectRef.apiGroup",
  "objectRef.resource",
  "objectRef.namespace",
  "objectRef.name",
  "responseStatus.code",
  "stage",
  "level",
  "instance",
  "since",
  "until",
] as const;

const ref = (event: AuditEvent) => event.event?.objectRef ?? {};
const code = (event: AuditEvent) => {
  const value = event.event?.responseStatus?.code;
  return value === undefined ? undefined : String(value);
};

export const auditEventDefinition = defineResource({
  group: GROUP,
  version: VERSION,
  kind: "AuditEvent",
  plural: "auditevents",
  singular: "auditevent",
  shortNames: ["ae"],
  categories: [CATEGORY],
  namespaced: false,
  description:
    "AuditEvent is one stage of one audited request, kept in the platform's audit datastore for dataStoreTTL hours. Read-only; admins only. List newest first with field selectors on user.username, verb, objectRef.*, responseStatus.code, stage, level, instance, and the time range since/until.",
  verbs: ["get", "list"],
  schema: auditEventSchema,
  strategy: {},
  columns: [
    { name: "User", type: "string", description: "Who made the request.", cell: (e) => e.event?.user?.username ?? "" },
    { name: "Verb", type: "string", description: "The request's verb.", cell: (e) => e.event?.verb ?? "" },
    {
      name: "Resource",
      type: "string",
      description: "The resource (and subresource) the request was about.",
      cell: (e) => [ref(e).resource, ref(e).subresource].filter(Boolean).join("/"),
    },
    { name: "Namespace", type: "string", description: "The object's namespace.", cell: (e) => ref(e).namespace ?? "" },
    { name: "Object", type: "string", description: "The object's name.", cell: (e) => ref(e).name ?? "" },
    {
      name: "Code",
      type: "integer",
      description: "The response's HTTP status code.",
      cell: (e) => e.event?.responseStatus?.code ?? "",
    },
    { name: "Stage", type: "string", description: "The stage of the request.", cell: (e) => e.event?.stage ?? "" },
    {
      name: "Instance",
      type: "string",
      description: "The virtual cluster instance it came from.",
      priority: 1,
      cell: (e) => e.instance ?? "",
    },
    {
      name: "URI",
      type: "string",
      description: "The request URI.",
      priority: 1,
      cell: (e) => e.event?.requestURI ?? "",
    },
  ],
  selectableFields: {
    auditID: (e) => e.event?.auditID,
    "user.username": (e) => e.event?.user?.username,
    verb: (e) => e.event?.verb,
    "objectRef.apiGroup": (e) => ref(e).apiGroup,
    "objectRef.resource": (e) => ref(e).resource,
    "objectRef.namespace": (e) => ref(e).namespace,
    "objectRef.name": (e) => ref(e).name,
    "responseStatus.code": code,
    stage: (e) => e.event?.stage,
    level: (e) => e.event?.level,
    instance: (e) => e.instance,
  },
});
