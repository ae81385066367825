// The searchable fields of an audit event line. Only the head of the line is parsed: requestObject and
// responseObject come last in every line (event.ts) and can be large, and a string value inside the head cannot
// contain `,"requestObject":` unescaped (JSON escapes its quotes), so the first such key ends the head.

import type { AuditEventFields } from "./types.ts";

const PAYLOAD_KEYS = [',"requestObject":', ',"responseObject":'];

interface EventHead {
  auditID?: unknown;
  stage?: unknown;
  level?: unknown;
  verb?: unknown;
  user?: { username?: unknown };
  objectRef?: { apiGroup?: unknown; resource?: unknown; namespace?: unknown; name?: unknown };
  responseStatus?: { code?: unknown };
  stageTimestamp?: unknown;
}

const text = (value: unknown) => (typeof value === "string" ? value : "");

/** The head of an event line as an object (the payloads left out). Throws on a line that is not an object. */
export function parseEventHead(line: string): EventHead {
  let end = -1;
  for (const key of PAYLOAD_KEYS) {
    const at = line.indexOf(key);
    if (at !== -1 && (end === -1 || at < end)) end = at;
  }
  const head = JSON.parse(end === -1 ? line : `${line.slice(0, end)}}`) as unknown;
  if (!head || typeof head !== "object" || Array.isArray(head)) throw new Error("an audit event must be an object");
  return head as EventHead;
}

/** Fields of an event line; `fallbackTime` (ms) when its stageTimestamp is missing or unreadable. */
export function auditEventFields(line: string, fallbackTime: number): AuditEventFields {
  const head = parseEventHead(line);
  const ref = head.objectRef ?? {};
  const code = head.responseStatus?.code;
  const time = typeof head.stageTimestamp === "string" ? Date.parse(head.stageTimestamp) : Number.NaN;
  return {
    auditID: text(head.auditID),
    stage: text(head.stage),
    level: text(head.level),
    verb: text(head.verb),
    username: text(head.user?.username),
    apiGroup: text(ref.apiGroup),
    resource: text(ref.resource),
    namespace: text(ref.namespace),
    name: text(ref.name),
    code: typeof code === "number" && Number.isInteger(code) ? code : 0,
    time: Number.isFinite(time) ? time : fallbackTime,
  };
}
