// From a Kubernetes list request to a datastore search and back: field selectors to filters and a time range,
// limit and continue to keyset paging, stored lines to AuditEvent objects. Client mistakes are 400s that say what
// is accepted.

import { errors } from "../../apimachinery/errors.ts";
import { parseFieldSelector } from "../../apimachinery/field-selector.ts";
import type { KubeList } from "../../apimachinery/types.ts";
import { AUDIT_EVENT_FIELDS, type AuditEvent, type AuditEventBody } from "../../apis/management/v1/auditevent.ts";
import { GROUP, VERSION } from "../../apis/management/v1/common.ts";
import type { AuditCursor, AuditFilter, AuditSearch, FilterColumn, StoredAuditEvent } from "./types.ts";

/** Events per page when the client sets no limit (kubectl asks for 500), and the most a page holds. */
export const DEFAULT_PAGE = 500;
export const MAX_PAGE = 5_000;

const COLUMN_OF: Readonly<Record<string, FilterColumn>> = {
  "metadata.name": "auditID",
  auditID: "auditID",
  "user.username": "username",
  verb: "verb",
  "objectRef.apiGroup": "apiGroup",
  "objectRef.resource": "resource",
  "objectRef.namespace": "namespace",
  "objectRef.name": "name",
  "responseStatus.code": "code",
  stage: "stage",
  level: "level",
  instance: "instance",
};

const DURATION = /^(\d+)(s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** An RFC 3339 time, or a duration back from `now`: 90s, 15m, 2h, 7d. */
function timeBound(field: string, value: string, now: number): number {
  const duration = DURATION.exec(value);
  if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]];
  const time = /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isFinite(time)) return time;
  throw errors.badRequest(
    `invalid field selector value for ${field}: "${value}" is neither an RFC 3339 time (2026-11-25T10:00:00Z) nor a duration back from now (90s, 15m, 2h, 7d)`,
  );
}

export interface AuditListOptions {
  fieldSelector?: string;
  labelSelector?: string;
  limit?: number;
  continue?: string;
}

export function encodeCursor(cursor: AuditCursor): string {
  return Buffer.from(JSON.stringify([cursor.time, cursor.id, cursor.snapshot])).toString("base64url");
}

export function decodeCursor(token: string): AuditCursor {
  try {
    const value = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(value) && value.length === 3 && value.every((n) => Number.isSafeInteger(n))) {
      const [time, id, snapshot] = value as number[];
      return { time, id, snapshot };
    }
  } catch {
    // answered below
  }
  throw errors.badRequest("continue key is not valid: it must be the metadata.continue of an auditevents list");
}

/** The datastore search a list request asks for. */
export function auditSearchOf(options: AuditListOptions, now: number): AuditSearch {
  if (options.labelSelector?.trim()) {
    throw errors.badRequest("audit events have no labels: select them with --field-selector instead");
  }
  const filters: AuditFilter[] = [];
  const search: AuditSearch = { filters, limit: Math.min(options.limit || DEFAULT_PAGE, MAX_PAGE) };
  for (const { field, operator, value } of parseFieldSelector(options.fieldSelector ?? "").requirements) {
    if (field === "since" || field === "until") {
      if (operator !== "=") throw errors.badRequest(`field selector ${field} takes = only (a time bound)`);
      search[field] = timeBound(field, value, now);
      continue;
    }
    const column = COLUMN_OF[field];
    if (!column) {
      throw errors.badRequest(
        `field label not supported: ${field} (auditevents select on ${AUDIT_EVENT_FIELDS.join(", ")})`,
      );
    }
    let typed: string | number = value;
    if (column === "code") {
      if (!/^\d{1,3}$/.test(value))
        throw errors.badRequest(`responseStatus.code must be an HTTP status code, not "${value}"`);
      typed = Number(value);
    }
    filters.push({ column, equals: operator === "=", value: typed });
  }
  if (options.continue) search.after = decodeCursor(options.continue);
  return search;
}

/** RFC 3339 in whole seconds, as metadata times are. */
const seconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

/** A stored event as the API serves it. */
export function auditEventObject(stored: StoredAuditEvent): AuditEvent {
  const event = JSON.parse(stored.line) as AuditEventBody;
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: "AuditEvent",
    metadata: { name: event.auditID ?? "", creationTimestamp: seconds(stored.time) },
    event,
    ...(stored.instance ? { instance: stored.instance } : {}),
  };
}

/** A page of events as an AuditEventList. */
export function auditEventList(events: StoredAuditEvent[], snapshot: number, next: AuditCursor | undefined): KubeList {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: "AuditEventList",
    metadata: { resourceVersion: String(snapshot), ...(next ? { continue: encodeCursor(next) } : {}) },
    items: events.map(auditEventObject),
  };
}
