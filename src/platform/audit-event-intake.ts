// `POST .../virtualclusterinstances/<name>/auditevents`: a connected virtual cluster hands over its audit events
// (an AuditEventBatch), which go to the audit datastore tagged with the instance. The URL names the instance, so a
// caller can only tag events with an instance it may write to (its own runtime, runtime-binding.ts). Each event gets
// an ID of its own, qualified by the instance (`<namespace>.<name>.<auditID>`): a virtual cluster cannot store an
// event under the ID of one of the platform's, which stay the answer to lookups by ID and field selectors. Events
// are redacted again here: the platform does not rely on the sender for that. `disableAgentSyncBack: true` in the audit config refuses batches (403), which
// tells the virtual cluster to stop sending.

import { errors } from "../apimachinery/errors.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import { AUDIT_EVENT_BATCH_KIND, auditEventBatchSchema } from "../apis/management/v1/auditevent.ts";
import { GROUP, VERSION } from "../apis/management/v1/common.ts";
import type { AuditLogger } from "../audit/audit-logger.ts";
import { auditJson } from "../audit/redact.ts";
import type { AuditConfig } from "../config/types.ts";
import type { ActionHandler } from "../registry/types.ts";

/** The sender's answer to a refused batch names this, so it can stop sending. */
export const SYNC_BACK_DISABLED = "disableAgentSyncBack";
const MAX_EVENTS = 10_000;
/** A virtual cluster's own audit IDs are UUIDs; this keeps the qualified ID unambiguous (no dots) and bounded. */
const FORWARDED_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The ID a forwarded event is stored under: no platform event ID (a UUID) has a dot, and a namespace has none. */
export function forwardedAuditId(namespace: string, name: string, auditID: string): string {
  return `${namespace}.${name}.${auditID}`;
}

export interface AuditEventIntakeOptions {
  audit: Pick<AuditLogger, "ingest">;
  auditConfig(): AuditConfig;
}

export function auditEventIntake(options: AuditEventIntakeOptions): ActionHandler {
  return {
    kind: AUDIT_EVENT_BATCH_KIND,
    schema: auditEventBatchSchema,
    description: "A batch of a virtual cluster's audit events for the platform's audit datastore.",
    verbs: ["create"],
    async handle({ body, parent }): Promise<KubeObject> {
      const namespace = parent?.metadata.namespace ?? "";
      const name = parent?.metadata.name ?? "";
      if (options.auditConfig().disableAgentSyncBack) {
        throw errors.forbidden(
          { group: GROUP, resource: "virtualclusterinstances/auditevents" },
          name,
          `the platform's audit config sets ${SYNC_BACK_DISABLED}: virtual clusters do not send their audit events`,
        );
      }
      const events = (body as { events?: unknown } | undefined)?.events;
      if (!Array.isArray(events)) throw errors.badRequest("an AuditEventBatch needs events: a list of audit events");
      if (events.length > MAX_EVENTS) {
        throw errors.badRequest(`an AuditEventBatch holds at most ${MAX_EVENTS} events, not ${events.length}`);
      }
      const lines = events.map((event, index) => {
        if (!event || typeof event !== "object" || Array.isArray(event) || typeof event.auditID !== "string") {
          throw errors.badRequest(`events[${index}] is not an audit event (an object with an auditID)`);
        }
        if (!FORWARDED_ID.test(event.auditID)) {
          throw errors.badRequest(
            `events[${index}].auditID must be 1 to 128 letters, digits, "-" and "_" (a UUID), starting with a letter or digit`,
          );
        }
        return auditJson({ ...event, auditID: forwardedAuditId(namespace, name, event.auditID) });
      });
      options.audit.ingest(lines, `${namespace}/${name}`);
      return {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: AUDIT_EVENT_BATCH_KIND,
        metadata: {},
        status: { accepted: lines.length },
      } as KubeObject;
    },
  };
}
