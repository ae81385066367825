// AuditEvent: schema and the type derived from it (no run-time imports beyond the builders: the console imports the
// type). `event` is the audit.k8s.io/v1 Event as the audit log file has it; the fields named here are the ones the
// columns, field selectors and console read, and every other field is kept as written.

import {
  integer,
  type KindOf,
  object,
  openObject,
  openObjectOf,
  type Static,
  string,
  stringList,
  stringMap,
  timestamp,
} from "../../../apimachinery/schema-builders.ts";

const userInfo = (description: string) =>
  openObjectOf({ username: string("User name."), groups: stringList("Groups of the user.") }, description);

export const auditEventSchema = {
  event: openObjectOf(
    {
      auditID: string("Unique ID of the request; every stage of one request has the same."),
      stage: string("Stage of the request: RequestReceived, ResponseStarted, ResponseComplete or Panic."),
      level: string("Audit level the event was written at: Metadata, Request or RequestResponse."),
      verb: string("Kubernetes verb of the request (get, list, create...); lower-case HTTP method otherwise."),
      requestURI: string("Request URI as the client sent it."),
      user: userInfo("Who made the request (after authentication)."),
      impersonatedUser: userInfo("Whom the request impersonated, if it did."),
      sourceIPs: stringList("Source addresses of the request, client first."),
      userAgent: string("The client's User-Agent."),
      objectRef: openObjectOf(
        {
          resource: string("Resource."),
          subresource: string("Subresource."),
          namespace: string("Namespace."),
          name: string("Object name."),
          apiGroup: string("API group; empty for the core group."),
        },
        "The object the request was about.",
      ),
      responseStatus: openObjectOf(
        {
          code: integer("HTTP status code of the response."),
          message: string("Message of the response's Status."),
          reason: string("Reason of the response's Status."),
        },
        "The response's status.",
      ),
      requestReceivedTimestamp: timestamp("When the request reached the server."),
      stageTimestamp: timestamp("When this stage was reached."),
      annotations: stringMap("Annotations set by the server's plug-ins (authorization decision and reason...)."),
    },
    "The audit.k8s.io/v1 Event as the audit log file has it (credentials redacted).",
  ),
  instance: string(
    'The virtual cluster instance the event came from, "<namespace>/<name>"; absent for the platform itself.',
  ),
};

export type AuditEvent = KindOf<typeof auditEventSchema>;
/** The audit.k8s.io/v1 Event of an AuditEvent. */
export type AuditEventBody = NonNullable<AuditEvent["event"]>;

/** The body a virtual cluster sends to `virtualclusterinstances/<name>/auditevents`. */
export const AUDIT_EVENT_BATCH_KIND = "AuditEventBatch";

export const auditEventBatchSchema = {
  events: {
    type: "array",
    description: "audit.k8s.io/v1 Events, oldest first.",
    items: openObject("An audit.k8s.io/v1 Event."),
  },
  status: object({ accepted: integer("Events stored.") }, "What the platform did with the batch."),
};
export type AuditEventBatchStatus = Static<typeof auditEventBatchSchema.status>;
