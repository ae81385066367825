// The searchable fields of an audit event line. Only the head of the line is read: requestObject and
// responseObject come last in every line (event.ts) and can be large, and a string value inside the head cannot
// contain `,"requestObject":` unescaped (JSON escapes its quotes), so the first such key ends the head. A line in
// event.ts's own member order is read in place (ownLineFields), several times cheaper than JSON.parse of the head,
// which decides for any other line.

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
  // Another shape than event.ts writes: JSON.parse decides (and throws for a line that is no JSON object).
  return ownLineFields(line, fallbackTime) ?? parsedEventFields(line, fallbackTime);
}

/** The same fields through JSON.parse of the head: exact for any line, and several times the CPU of the scan. */
export function parsedEventFields(line: string, fallbackTime: number): AuditEventFields {
  const head = parseEventHead(line);
  const ref = head.objectRef ?? {};
  const code = head.responseStatus?.code;
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
    time: eventTime(head.stageTimestamp, fallbackTime),
  };
}

/** The last stageTimestamp read and its time: events of one millisecond share the text. */
let lastTimestamp = "";
let lastTime = Number.NaN;

function eventTime(timestamp: unknown, fallbackTime: number): number {
  if (typeof timestamp !== "string") return fallbackTime;
  if (timestamp !== lastTimestamp) {
    lastTimestamp = timestamp;
    lastTime = Date.parse(timestamp);
  }
  return Number.isFinite(lastTime) ? lastTime : fallbackTime;
}

/** How every line event.ts writes begins; the level follows. */
const OWN_HEAD = '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":';

/**
 * The fields of a line with event.ts's own members in its order (the platform's lines and its virtual clusters'),
 * read in place: each member is expected at the position where the previous one ended, so no key is searched for
 * and nothing is built but the field values. Undefined as soon as the line differs (other member order, an escape
 * in a value read here): JSON.parse then decides.
 */
function ownLineFields(line: string, fallbackTime: number): AuditEventFields | undefined {
  if (!line.startsWith(OWN_HEAD)) return undefined;
  const reader = new LineReader(line, OWN_HEAD.length);
  const level = reader.string();
  const auditID = reader.member(',"auditID":') ? reader.string() : undefined;
  const stage = reader.member(',"stage":') ? reader.string() : undefined;
  if (!reader.member(',"requestURI":') || !reader.skip()) return undefined;
  const verb = reader.member(',"verb":') ? reader.string() : undefined;
  const username = reader.member(',"user":{"username":') ? reader.string() : undefined;
  if (level === undefined || auditID === undefined || stage === undefined || verb === undefined) return undefined;
  if (username === undefined || !reader.skipMembers() || !reader.member(',"sourceIPs":') || !reader.skip()) {
    return undefined;
  }
  if (reader.member(',"userAgent":') && !reader.skip()) return undefined;
  const fields: AuditEventFields = {
    auditID,
    stage,
    level,
    verb,
    username,
    apiGroup: "",
    resource: "",
    namespace: "",
    name: "",
    code: 0,
    time: fallbackTime,
  };
  if (reader.member(',"objectRef":{')) {
    for (let key = reader.key(); key !== ""; key = reader.key()) {
      const value = reader.string();
      if (key === undefined || value === undefined) return undefined;
      if (key === "apiGroup" || key === "resource" || key === "namespace" || key === "name") fields[key] = value;
    }
  }
  if (reader.member(',"responseStatus":{')) {
    for (let key = reader.key(); key !== ""; key = reader.key()) {
      if (key === undefined) return undefined;
      if (key !== "code") {
        if (!reader.skip()) return undefined;
        continue;
      }
      const code = reader.integer();
      if (code === undefined) return undefined;
      fields.code = code;
    }
  }
  if (!reader.member(',"requestReceivedTimestamp":') || !reader.skip()) return undefined;
  const timestamp = reader.member(',"stageTimestamp":') ? reader.string() : undefined;
  if (timestamp === undefined) return undefined;
  fields.time = eventTime(timestamp, fallbackTime);
  return fields;
}

const QUOTE = 34;
const BACKSLASH = 92;

/** A position in a compact JSON line and the few steps ownLineFields() takes; each answers undefined/false when the text is not what it expects. */
class LineReader {
  private readonly line: string;
  private at: number;

  constructor(line: string, at: number) {
    this.line = line;
    this.at = at;
  }

  /** Moves past `prefix` if the text continues with it. */
  member(prefix: string): boolean {
    if (!this.line.startsWith(prefix, this.at)) return false;
    this.at += prefix.length;
    return true;
  }

  /** A string without escapes. */
  string(): string | undefined {
    const line = this.line;
    if (line.charCodeAt(this.at) !== QUOTE) return undefined;
    const close = line.indexOf('"', this.at + 1);
    if (close === -1) return undefined;
    const value = line.slice(this.at + 1, close);
    if (value.includes("\\")) return undefined;
    this.at = close + 1;
    return value;
  }

  /** A member's key (the reader is then at its value); "" at the end of the object (left); undefined: no key. */
  key(): string | undefined {
    const code = this.line.charCodeAt(this.at);
    if (code === 125 /* } */) {
      this.at++;
      return "";
    }
    if (code === 44 /* , */) this.at++;
    const key = this.string();
    if (key === undefined || this.line.charCodeAt(this.at) !== 58 /* : */) return undefined;
    this.at++;
    return key;
  }

  /** A non-negative integer (status codes). */
  integer(): number | undefined {
    const line = this.line;
    let value = 0;
    const start = this.at;
    for (let code = line.charCodeAt(this.at); code >= 48 && code <= 57; code = line.charCodeAt(++this.at)) {
      value = value * 10 + code - 48;
    }
    return this.at > start && this.at - start < 16 ? value : undefined;
  }

  /** Skips a value: a string, an object or array (brackets counted outside strings), or a number or literal. */
  skip(): boolean {
    const line = this.line;
    const first = line.charCodeAt(this.at);
    if (first === QUOTE) return this.skipString();
    if (first !== 123 && first !== 91) {
      while (this.at < line.length && !",}]".includes(line[this.at])) this.at++;
      return true;
    }
    this.at++;
    return this.skipMembers();
  }

  /** Skips to the end of the object or array the reader is in, past its closing bracket. */
  skipMembers(): boolean {
    const line = this.line;
    let depth = 1;
    for (;;) {
      // Only the few characters between strings are looked at one by one; strings are jumped over.
      const quote = line.indexOf('"', this.at);
      const end = quote === -1 ? line.length : quote;
      for (; this.at < end; this.at++) {
        const code = line.charCodeAt(this.at);
        if (code === 123 || code === 91) depth++;
        else if ((code === 125 || code === 93) && --depth === 0) {
          this.at++;
          return true;
        }
      }
      if (quote === -1 || !this.skipString()) return false;
    }
  }

  /** Moves past the string at the reader, escapes and all. */
  private skipString(): boolean {
    const line = this.line;
    let close = line.indexOf('"', this.at + 1);
    for (;;) {
      if (close === -1) return false;
      let backslashes = 0;
      while (line.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) break;
      close = line.indexOf('"', close + 1);
    }
    this.at = close + 1;
    return true;
  }
}
