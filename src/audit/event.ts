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

function createdMetadata(completion: AuditCompletion): { name?: string; namespace?: string } | undefined {
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

/** The event line (without newline). `completion` is given for ResponseStarted, ResponseComplete and Panic. */
export function auditEventLine(
  stage: AuditStage,
  level: AuditLevel,
  request: AuditRequest,
  completion: AuditCompletion | undefined,
  now: Date,
): string {
  const annotations: Record<string, string> = {};
  let requestObject: string | undefined;
  let responseObject: string | undefined;
  if (completion && stage !== "ResponseStarted") {
    if (levelAtLeast(level, "Request") && completion.requestObject) {
      const prepared =
        completion.prepared instanceof PreparedRequest ? completion.prepared : prepareRequestObject(completion);
      requestObject = prepared.json;
      Object.assign(annotations, prepared.annotations);
    }
    if (levelAtLeast(level, "RequestResponse")) {
      // A pre-encoded answer with nothing to redact is logged as it is: no decode and re-encode per request.
      const text = completion.responseJson;
      if (text !== undefined && byteLength(text) <= MAX_PAYLOAD_BYTES && !mayHoldSecrets(text)) responseObject = text;
      else if (completion.responseObject !== undefined) {
        const response = completion.responseObject;
        responseObject = payload(() => response, undefined, OMITTED_RESPONSE_ANNOTATION, annotations);
      }
    }
  }
  // Built as text: one JSON.stringify per string value is much cheaper than building and serializing an object.
  const info = request.requestInfo;
  let line = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"${level}","auditID":${JSON.stringify(request.id)}`;
  line += `,"stage":"${stage}","requestURI":${JSON.stringify(auditRequestUri(request.requestUri ?? info.path))}`;
  line += `,"verb":${JSON.stringify(info.verb)},"user":${userPart(request.user)}`;
  line += `,"sourceIPs":${request.sourceIp ? `[${JSON.stringify(request.sourceIp)}]` : "[]"}`;
  if (request.userAgent) line += `,"userAgent":${JSON.stringify(request.userAgent)}`;
  const ref = objectRef(request, completion);
  if (ref) line += `,"objectRef":${JSON.stringify(ref)}`;
  if (completion) line += `,"responseStatus":${JSON.stringify(responseStatus(completion))}`;
  line += `,"requestReceivedTimestamp":"${microTime(request.receivedAt)}","stageTimestamp":"${microTime(now)}"`;
  if (Object.keys(annotations).length > 0) line += `,"annotations":${JSON.stringify(annotations)}`;
  if (requestObject !== undefined) line += `,"requestObject":${requestObject}`;
  if (responseObject !== undefined) line += `,"responseObject":${responseObject}`;
  line += "}";
  return line;
}
