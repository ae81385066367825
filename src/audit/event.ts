// One audit.k8s.io/v1 Event as one JSON line. Request and response objects are serialized (redacted) separately so
// a payload above 2 MiB can be left out with an annotation saying so, without ever building a huge line.

import { levelAtLeast } from "./policy.ts";
import { auditJson, auditRequestUri, mayHoldSecrets } from "./redact.ts";
import type {
  AuditBodyRequest,
  AuditCompletion,
  AuditLevel,
  AuditRequest,
  AuditRequestInfo,
  AuditStage,
  AuditUser,
} from "./types.ts";

export const MAX_PAYLOAD_BYTES = 2 * 1024 * 1024;
export const OMITTED_REQUEST_ANNOTATION = "audit.platform.sh/request-object-omitted";
export const OMITTED_RESPONSE_ANNOTATION = "audit.platform.sh/response-object-omitted";

/** Recently formatted milliseconds: under load many events share one (received and stage times alternate). */
const formatted = new Map<number, string>();

/** RFC 3339 with microseconds, as the Kubernetes API server writes audit timestamps. */
export function microTime(date: Date): string {
  return microTimeOf(date.getTime());
}

/** microTime() of a time in milliseconds since the epoch. */
function microTimeOf(ms: number): string {
  let text = formatted.get(ms);
  if (text === undefined) {
    if (formatted.size >= 64) formatted.clear();
    text = `${new Date(ms).toISOString().slice(0, -1)}000Z`;
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

/** `,"responseStatus":{…}`. */
function statusPart(completion: AuditCompletion): string {
  return `,"responseStatus":${JSON.stringify(responseStatus(completion))}`;
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

/**
 * A piece of an event line: text, or the UTF-8 bytes of text that many lines share (constants, a caller's parts,
 * a code's status, a millisecond's timestamp), encoded once and copied into the batch buffer as they are.
 */
export type LinePiece = string | Uint8Array;

const utf8 = (text: string): Uint8Array => Buffer.from(text);

const LEVELS: readonly AuditLevel[] = ["None", "Metadata", "Request", "RequestResponse"];
/** `{"kind":…,"level":…,"auditID":` per level, and the same with the ID's opening quote. */
const LINE_HEADS = new Map<AuditLevel, Uint8Array>();
const QUOTED_LINE_HEADS = new Map<AuditLevel, Uint8Array>();
for (const level of LEVELS) {
  const head = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"${level}","auditID":`;
  LINE_HEADS.set(level, utf8(head));
  QUOTED_LINE_HEADS.set(level, utf8(`${head}"`));
}
const STAGES: readonly AuditStage[] = ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"];
/** An audit ID that JSON writes as it is (the server's are UUIDs): no JSON.stringify per line. */
const PLAIN_ID = /^[0-9A-Za-z_.:-]*$/;
const QUOTE = utf8('"');
const QUOTE_END = utf8('"}');
const END = utf8("}");
const RESPONSE_OBJECT = utf8(',"responseObject":');

/** Whether two requests' infos are equal in every field (so are their objectRefs and policy decisions). */
export function sameRequestInfo(a: AuditRequestInfo, b: AuditRequestInfo): boolean {
  return (
    a.verb === b.verb &&
    a.resourceRequest === b.resourceRequest &&
    a.path === b.path &&
    a.name === b.name &&
    a.namespace === b.namespace &&
    a.resource === b.resource &&
    a.subresource === b.subresource &&
    a.group === b.group &&
    a.version === b.version
  );
}

/**
 * The text every event line of one caller's request shares (requestURI, verb, user, source IP, agent, objectRef
 * from the path), serialized once and kept for the next requests that are the same: a client repeating a request
 * costs a comparison of the fields, not their serialization.
 */
class RequestParts {
  /** What the parts were made of (compared by identity first, then by content). */
  readonly user: AuditUser | undefined;
  readonly impersonatedUser: AuditUser | undefined;
  readonly requestUri: string | undefined;
  readonly sourceIp: string | undefined;
  readonly userAgent: string | undefined;
  readonly info: AuditRequestInfo;
  /** `,"objectRef":{…}` from the path, or empty. */
  readonly objectRef: Uint8Array;
  /** Per stage: `,"stage":…,"requestURI":…,"verb":…,"user":…,"sourceIPs":[…]` (`,"userAgent":…`). */
  private readonly stageCaller = new Map<AuditStage, Uint8Array>();
  /** The same with the audit ID's closing quote first. */
  private readonly quotedStageCaller = new Map<AuditStage, Uint8Array>();

  constructor(request: AuditRequest) {
    this.user = request.user;
    this.impersonatedUser = request.impersonatedUser;
    this.requestUri = request.requestUri;
    this.sourceIp = request.sourceIp;
    this.userAgent = request.userAgent;
    this.info = { ...request.requestInfo };
    const info = request.requestInfo;
    let caller = `,"requestURI":${JSON.stringify(auditRequestUri(request.requestUri ?? info.path))}`;
    caller += `,"verb":${JSON.stringify(info.verb)},"user":${userPart(request.user)}`;
    if (request.impersonatedUser) caller += `,"impersonatedUser":${userPart(request.impersonatedUser)}`;
    caller += `,"sourceIPs":${request.sourceIp ? `[${JSON.stringify(request.sourceIp)}]` : "[]"}`;
    if (request.userAgent) caller += `,"userAgent":${JSON.stringify(request.userAgent)}`;
    for (const stage of STAGES) {
      const text = `,"stage":"${stage}"${caller}`;
      this.stageCaller.set(stage, utf8(text));
      this.quotedStageCaller.set(stage, utf8(`"${text}`));
    }
    this.objectRef = utf8(objectRefPart(request));
  }

  /** Whether these parts are those of `request`. */
  matches(request: AuditRequest): boolean {
    return (
      this.user === request.user &&
      this.impersonatedUser === request.impersonatedUser &&
      this.requestUri === request.requestUri &&
      this.sourceIp === request.sourceIp &&
      this.userAgent === request.userAgent &&
      sameRequestInfo(this.info, request.requestInfo)
    );
  }

  caller(stage: AuditStage, quoted: boolean): Uint8Array {
    return (quoted ? this.quotedStageCaller : this.stageCaller).get(stage) ?? END.subarray(0, 0);
  }
}

/** The parts of the last few distinct requests, newest first. */
const recentParts: RequestParts[] = [];
const RECENT_PARTS = 4;

function requestParts(request: AuditRequest): RequestParts {
  for (let i = 0; i < recentParts.length; i++) {
    const parts = recentParts[i];
    if (parts.matches(request)) return parts;
  }
  const parts = new RequestParts(request);
  if (recentParts.length >= RECENT_PARTS) recentParts.pop();
  recentParts.unshift(parts);
  return parts;
}

/** Encoded text by millisecond, bounded; the last one is checked first (most lines of a moment share it). */
class ByMillisecond {
  private readonly entries = new Map<number, Uint8Array>();
  private lastMs = Number.NaN;
  private last: Uint8Array = END;
  private readonly format: (ms: number) => string;

  constructor(format: (ms: number) => string) {
    this.format = format;
  }

  get(ms: number): Uint8Array {
    if (ms === this.lastMs) return this.last;
    let bytes = this.entries.get(ms);
    if (bytes === undefined) {
      if (this.entries.size >= 64) this.entries.clear();
      bytes = utf8(this.format(ms));
      this.entries.set(ms, bytes);
    }
    this.lastMs = ms;
    this.last = bytes;
    return bytes;
  }
}

/** `,"requestReceivedTimestamp":"…","stageTimestamp":"` by the received millisecond. */
const receivedParts = new ByMillisecond((ms) => `,"requestReceivedTimestamp":"${microTimeOf(ms)}","stageTimestamp":"`);
/** The stage timestamp. */
const stageStamps = new ByMillisecond(microTimeOf);

/** `,"responseStatus":{…}` of the plain statuses (a code below 400, no reason), made once per code. */
const plainStatusBytes = new Map<number, Uint8Array>();

function statusPiece(completion: AuditCompletion): LinePiece {
  if (completion.code >= 400 || completion.reason) return statusPart(completion);
  let bytes = plainStatusBytes.get(completion.code);
  if (bytes === undefined) {
    bytes = utf8(statusPart(completion));
    if (plainStatusBytes.size < 64) plainStatusBytes.set(completion.code, bytes);
  }
  return bytes;
}

/** The last response text checked for secrets, and the answer: repeated reads of one object are checked once. */
let checkedText = "";
let checkedHolds = false;

function responseMayHoldSecrets(text: string): boolean {
  if (text !== checkedText) {
    checkedHolds = mayHoldSecrets(text);
    checkedText = text;
  }
  return checkedHolds;
}

/**
 * Puts the pieces of the event line (without newline) into `out` from index 0 and returns how many: their
 * concatenation (as UTF-8) is the line. The audit pipe copies them into its batch buffer one by one, so a line is
 * never built as one string, and most pieces are bytes encoded once: constants, or shared by a caller's requests.
 * `completion` is given for ResponseStarted, ResponseComplete and Panic; `nowMs` is the stage's time.
 */
export function auditEventPieces(
  out: LinePiece[],
  stage: AuditStage,
  level: AuditLevel,
  request: AuditRequest,
  completion: AuditCompletion | undefined,
  nowMs: number,
): number {
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
      if (text !== undefined && byteLength(text) <= MAX_PAYLOAD_BYTES && !responseMayHoldSecrets(text)) {
        responseObject = text;
      } else if (completion.responseObject !== undefined) {
        const response = completion.responseObject;
        annotations ??= {};
        responseObject = payload(() => response, undefined, OMITTED_RESPONSE_ANNOTATION, annotations);
      }
    }
  }
  const parts = requestParts(request);
  const id = request.id;
  let n = 0;
  const plainId = PLAIN_ID.test(id);
  out[n++] = (plainId ? QUOTED_LINE_HEADS : LINE_HEADS).get(level) ?? END;
  out[n++] = plainId ? id : JSON.stringify(id);
  out[n++] = parts.caller(stage, plainId);
  if (completion && completion.code < 300 && completionNamesObject(request)) {
    out[n++] = objectRefPart(request, completion);
  } else if (parts.objectRef.length > 0) out[n++] = parts.objectRef;
  if (completion) out[n++] = statusPiece(completion);
  out[n++] = receivedParts.get(request.receivedAt.getTime());
  out[n++] = stageStamps.get(nowMs);
  const annotated = annotations !== undefined && Object.keys(annotations).length > 0;
  if (!annotated && requestObject === undefined && responseObject === undefined) {
    out[n++] = QUOTE_END;
    return n;
  }
  out[n++] = QUOTE;
  if (annotated) out[n++] = `,"annotations":${JSON.stringify(annotations)}`;
  if (requestObject !== undefined) out[n++] = `,"requestObject":${requestObject}`;
  if (responseObject !== undefined) {
    out[n++] = RESPONSE_OBJECT;
    out[n++] = responseObject;
  }
  out[n++] = END;
  return n;
}

/** The text of a line piece. */
export function pieceText(piece: LinePiece): string {
  return typeof piece === "string" ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.length).toString();
}

/** The event line (without newline): the pieces of auditEventPieces() joined. */
export function auditEventLine(
  stage: AuditStage,
  level: AuditLevel,
  request: AuditRequest,
  completion: AuditCompletion | undefined,
  now: Date,
): string {
  const pieces: LinePiece[] = [];
  const count = auditEventPieces(pieces, stage, level, request, completion, now.getTime());
  let line = "";
  for (let i = 0; i < count; i++) line += pieceText(pieces[i]);
  return line;
}
