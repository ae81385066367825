// One audit.k8s.io/v1 Event as one JSON line. Request and response objects are serialized (redacted) separately so
// a payload above 2 MiB can be left out with an annotation saying so, without ever building a huge line.

import { levelAtLeast } from "./policy.ts";
import { auditJson, auditRequestUri, mayHoldSecrets } from "./redact.ts";
import type { AuditBodyRequest, AuditCompletion, AuditLevel, AuditRequest, AuditStage, AuditUser } from "./types.ts";

export const MAX_PAYLOAD_BYTES = 2 * 1024 * 1024;
export const OMITTED_REQUEST_ANNOTATION = "audit.platform.sh/request-object-omitted";
export const OMITTED_RESPONSE_ANNOTATION = "audit.platform.sh/response-object-omitted";

/** Recently formatted milliseconds: under load many events share one (received and stage times alternate). */
const formatted = new Map<number, string>();

/** RFC 3339 with microseconds, as the Kubernetes API server writes audit timestamps. */
export function microTime(date: Date): string {
  const ms = date.getTime();
  let text = formatted.get(ms);
  if (text === undefined) {
    if (formatted.size >= 64) formatted.clear();
    text = `${date.toISOString().slice(0, -1)}000Z`;
    formatted.set(ms, text);
  }
  return text;
}

/** The user part of events, serialized once per caller object (every stage of a request shares it). */
const userJson = new WeakMap<AuditUser, string>();
const ANONYMOUS_JSON = JSON.stringify({ username: "system:anonymous", groups: ["system:unauthenticated"] });

function userPart(user: AuditUser | undefined): string {
  if (!user) return ANONYMOUS_JSON;
  let json = userJson.get(user);
  if (json === undefined) {
    json = JSON.stringify({
      username: user.name,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      ...(user.extra ? { extra: user.extra } : {}),
    });
    userJson.set(user, json);
  }
  return json;
}

function omittedText(bytes: number): string {
  return `payload of ${bytes} bytes exceeds the ${MAX_PAYLOAD_BYTES}-byte limit (2 MiB) and is omitted`;
}

/** Bytes of a JSON string, cheaply when it is clearly small. */
function byteLength(json: string): number {
  return json.length * 3 <= MAX_PAYLOAD_BYTES ? json.length : Buffer.byteLength(json);
}

function payload(
  produce: () => unknown,
  knownBytes: number | undefined,
  annotation: string,
  annotations: Record<string, string>,
): string | undefined {
  if (knownBytes !== undefined && knownBytes > MAX_PAYLOAD_BYTES) {
    annotations[annotation] = omittedText(knownBytes);
    return undefined;
  }
  let value: unknown;
  try {
    value = produce();
  } catch {
    return undefined; // an undecodable body was answered 400; there is no object to log
  }
  if (value === undefined) return undefined;
  const json = auditJson(value);
  const bytes = byteLength(json);
  if (bytes > MAX_PAYLOAD_BYTES) {
    annotations[annotation] = omittedText(bytes);
    return undefined;
  }
  return json;
}

/** An event's request object, serialized and redacted before the request reached the registry. */
export class PreparedRequest {
  readonly json: string | undefined;
  /** The annotation saying the object was left out, if it was. */
  readonly annotations: Readonly<Record<string, string>>;

  constructor(json: string | undefined, annotations: Record<string, string>) {
    this.json = json;
    this.annotations = annotations;
  }
}

/** Builds the request object part of the ResponseComplete event (throws if it cannot be built). */
export function prepareRequestObject(request: AuditBodyRequest): PreparedRequest {
  const annotations: Record<string, string> = {};
  const json = request.requestObject
    ? payload(request.requestObject, request.requestBytes, OMITTED_REQUEST_ANNOTATION, annotations)
    : undefined;
  return new PreparedRequest(json, annotations);
}

/**
 * The objectRef of a resource request; exported for the minimal event. A create names no object in its path: once
 * it succeeded, the name (and namespace) come from the created object, as kube-apiserver logs them.
 */
export function objectRef(request: AuditRequest, completion?: AuditCompletion): Record<string, string> | undefined {
  const info = request.requestInfo;
  if (!info.resourceRequest) return undefined;
  const ref: Record<string, string> = { resource: info.resource };
  const created =
    !info.name && info.verb === "create" && completion && completion.code < 300
      ? createdMetadata(completion)
      : undefined;
  const namespace = info.namespace || created?.namespace;
  const name = info.name || created?.name;
  if (namespace) ref.namespace = namespace;
  if (name) ref.name = name;
  if (info.group) ref.apiGroup = info.group;
  ref.apiVersion = info.version;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}

/**
 * How the registry encodes an object it answers (apiVersion, kind, then metadata starting with resourceVersion and
 * name), capturing a name without escapes: a create's answer is read without decoding it.
 */
const ENCODED_NAME =
  /^\{"apiVersion":"(?:[^"\\]|\\.)*","kind":"(?:[^"\\]|\\.)*","metadata":\{"resourceVersion":"[^"\\]*","name":"([^"\\]*)"/;

function createdMetadata(completion: AuditCompletion): { name?: string; namespace?: string } | undefined {
  // A pre-encoded answer with no "namespace" key anywhere: only the name is needed, and it is read from the text.
  const json = completion.responseJson;
  const encoded = json !== undefined && !json.includes('"namespace":') ? ENCODED_NAME.exec(json) : null;
  if (encoded) return { name: encoded[1], namespace: undefined };
  const metadata = (completion.responseObject as { metadata?: unknown } | undefined)?.metadata;
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const { name, namespace } = metadata as Record<string, unknown>;
  return {
    name: typeof name === "string" ? name : undefined,
    namespace: typeof namespace === "string" ? namespace : undefined,
  };
}

function responseStatus(completion: AuditCompletion): Record<string, unknown> {
  if (completion.code < 400 && !completion.reason) return { metadata: {}, code: completion.code };
  const status: Record<string, unknown> = { metadata: {}, status: "Failure" };
  if (completion.message) status.message = completion.message;
  if (completion.reason) status.reason = completion.reason;
  status.code = completion.code;
  return status;
}

/** `,"responseStatus":{…}`; the plain ones (a code below 400, no reason) are made once per code. */
const plainStatus = new Map<number, string>();

function statusPart(completion: AuditCompletion): string {
  const plain = completion.code < 400 && !completion.reason;
  let part = plain ? plainStatus.get(completion.code) : undefined;
  if (part === undefined) {
    part = `,"responseStatus":${JSON.stringify(responseStatus(completion))}`;
    if (plain && plainStatus.size < 64) plainStatus.set(completion.code, part);
  }
  return part;
}

/** `,"objectRef":{…}`, or "" for a non-resource request. */
function objectRefPart(request: AuditRequest, completion?: AuditCompletion): string {
  const ref = objectRef(request, completion);
  return ref ? `,"objectRef":${JSON.stringify(ref)}` : "";
}

/** Whether the objectRef of this request's completion may name what the path did not (a create's new object). */
function completionNamesObject(request: AuditRequest): boolean {
  const info = request.requestInfo;
  return info.resourceRequest && !info.name && info.verb === "create";
}

const LINE_HEADS: Record<AuditLevel, string> = {
  None: "",
  Metadata: "",
  Request: "",
  RequestResponse: "",
};
for (const level of Object.keys(LINE_HEADS) as AuditLevel[]) {
  LINE_HEADS[level] = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"${level}","auditID":`;
}
const STAGE_PARTS: Record<AuditStage, string> = {
  RequestReceived: ',"stage":"RequestReceived"',
  ResponseStarted: ',"stage":"ResponseStarted"',
  ResponseComplete: ',"stage":"ResponseComplete"',
  Panic: ',"stage":"Panic"',
};

/**
 * The text every event line of one request shares, serialized once per request (the audit log keeps it with the
 * request's policy decision): requestURI through objectRef, and the received timestamp.
 */
export class RequestParts {
  /** `,"requestURI":…,"verb":…,"user":…,"sourceIPs":[…]` and `,"userAgent":…` when there is one. */
  readonly caller: string;
  /** `,"objectRef":{…}` from the path, or "". */
  readonly objectRef: string;
  /** `,"requestReceivedTimestamp":"…","stageTimestamp":"` */
  readonly received: string;

  constructor(request: AuditRequest) {
    const info = request.requestInfo;
    let caller = `,"requestURI":${JSON.stringify(auditRequestUri(request.requestUri ?? info.path))}`;
    caller += `,"verb":${JSON.stringify(info.verb)},"user":${userPart(request.user)}`;
    caller += `,"sourceIPs":${request.sourceIp ? `[${JSON.stringify(request.sourceIp)}]` : "[]"}`;
    if (request.userAgent) caller += `,"userAgent":${JSON.stringify(request.userAgent)}`;
    this.caller = caller;
    this.objectRef = objectRefPart(request);
    this.received = `,"requestReceivedTimestamp":"${microTime(request.receivedAt)}","stageTimestamp":"`;
  }
}

/**
 * The event line (without newline). `completion` is given for ResponseStarted, ResponseComplete and Panic. `parts`
 * are the request's shared parts when the caller keeps them between stages.
 */
export function auditEventLine(
  stage: AuditStage,
  level: AuditLevel,
  request: AuditRequest,
  completion: AuditCompletion | undefined,
  now: Date,
  parts: RequestParts = new RequestParts(request),
): string {
  let annotations: Record<string, string> | undefined;
  let requestObject: string | undefined;
  let responseObject: string | undefined;
  if (completion && stage !== "ResponseStarted") {
    if (levelAtLeast(level, "Request") && completion.requestObject) {
      const prepared =
        completion.prepared instanceof PreparedRequest ? completion.prepared : prepareRequestObject(completion);
      requestObject = prepared.json;
      if (prepared.json === undefined) annotations = { ...prepared.annotations };
    }
    if (levelAtLeast(level, "RequestResponse")) {
      // A pre-encoded answer with nothing to redact is logged as it is: no decode and re-encode per request.
      const text = completion.responseJson;
      if (text !== undefined && byteLength(text) <= MAX_PAYLOAD_BYTES && !mayHoldSecrets(text)) responseObject = text;
      else if (completion.responseObject !== undefined) {
        const response = completion.responseObject;
        annotations ??= {};
        responseObject = payload(() => response, undefined, OMITTED_RESPONSE_ANNOTATION, annotations);
      }
    }
  }
  // Built as text from constant and per-request parts: one JSON.stringify per value that changes.
  let line = LINE_HEADS[level] + JSON.stringify(request.id) + STAGE_PARTS[stage] + parts.caller;
  line +=
    completion && completion.code < 300 && completionNamesObject(request)
      ? objectRefPart(request, completion)
      : parts.objectRef;
  if (completion) line += statusPart(completion);
  line += `${parts.received + microTime(now)}"`;
  if (annotations && Object.keys(annotations).length > 0) line += `,"annotations":${JSON.stringify(annotations)}`;
  if (requestObject !== undefined) line += `,"requestObject":${requestObject}`;
  if (responseObject !== undefined) line += `,"responseObject":${responseObject}`;
  line += "}";
  return line;
}
