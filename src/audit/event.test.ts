import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  auditEventLine,
  auditEventPieces,
  type LinePiece,
  MAX_PAYLOAD_BYTES,
  microTime,
  OMITTED_REQUEST_ANNOTATION,
  OMITTED_RESPONSE_ANNOTATION,
  pieceText,
} from "./event.ts";
import { auditJson, auditRequestUri } from "./redact.ts";
import { completionOf } from "./testing-events.ts";
import type { AuditCompletion, AuditLevel, AuditRequest, AuditStage } from "./types.ts";

const received = new Date("2024-05-01T12:00:00.123Z");
const completion = (extra: Partial<AuditCompletion> = {}): AuditCompletion => ({
  id: "0c7a1b3e-0000-4000-8000-000000000001",
  method: "PUT",
  requestUri: "/kubernetes/management/apis/management.platform.sh/v1/users/alice?fieldManager=kubectl",
  requestInfo: {
    resourceRequest: true,
    verb: "update",
    path: "/apis/management.platform.sh/v1/users/alice",
    group: "management.platform.sh",
    version: "v1",
    namespace: "",
    resource: "users",
    name: "alice",
    subresource: "",
  },
  user: { name: "admin", uid: "u-1", groups: ["system:authenticated"] },
  userAgent: "kubectl/v1.32",
  sourceIp: "10.0.0.1",
  receivedAt: received,
  code: 200,
  requestObject: () => ({ kind: "User", spec: { email: "a@example.com" } }),
  requestBytes: 60,
  responseObject: { kind: "User", spec: { email: "a@example.com" } },
  ...extra,
});

describe("auditEventLine()", () => {
  it("auditEventLine() writes the audit.k8s.io/v1 Event fields", () => {
    const event = JSON.parse(
      auditEventLine("ResponseComplete", "Metadata", completion(), completion(), new Date("2024-05-01T12:00:00.130Z")),
    );
    assert.deepEqual(event, {
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: "Metadata",
      auditID: "0c7a1b3e-0000-4000-8000-000000000001",
      stage: "ResponseComplete",
      requestURI: "/kubernetes/management/apis/management.platform.sh/v1/users/alice?fieldManager=kubectl",
      verb: "update",
      user: { username: "admin", uid: "u-1", groups: ["system:authenticated"] },
      sourceIPs: ["10.0.0.1"],
      userAgent: "kubectl/v1.32",
      objectRef: { resource: "users", name: "alice", apiGroup: "management.platform.sh", apiVersion: "v1" },
      responseStatus: { metadata: {}, code: 200 },
      requestReceivedTimestamp: "2024-05-01T12:00:00.123000Z",
      stageTimestamp: "2024-05-01T12:00:00.130000Z",
    });
  });

  it("auditEventLine() names an impersonated identity after the caller, as kube-apiserver writes impersonatedUser", () => {
    const impersonated = completion({ impersonatedUser: { name: "dave", groups: ["devs", "system:authenticated"] } });
    const event = JSON.parse(auditEventLine("ResponseComplete", "Metadata", impersonated, impersonated, received));
    assert.equal(event.user.username, "admin");
    assert.deepEqual(event.impersonatedUser, { username: "dave", groups: ["devs", "system:authenticated"] });
    assert.deepEqual(Object.keys(event).slice(7, 9), ["user", "impersonatedUser"]);
    // The same request without impersonation shares no cached parts with it.
    assert.equal(
      JSON.parse(auditEventLine("ResponseComplete", "Metadata", completion(), completion(), received)).impersonatedUser,
      undefined,
    );
  });

  it("auditEventLine() names the created object of a create, from its answer, as kube-apiserver does", () => {
    const create = (code: number, namespace = "") =>
      completion({
        method: "POST",
        requestInfo: { ...completion().requestInfo, verb: "create", name: "", namespace },
        code,
        responseObject: { kind: "User", metadata: { name: "bob", namespace: "p-default" } },
      });
    const ref = (stage: "RequestReceived" | "ResponseComplete", request: AuditCompletion) =>
      JSON.parse(
        auditEventLine(stage, "Metadata", request, stage === "RequestReceived" ? undefined : request, received),
      ).objectRef;
    assert.equal(ref("ResponseComplete", create(201)).name, "bob");
    assert.equal(ref("ResponseComplete", create(201)).namespace, "p-default");
    assert.equal(ref("ResponseComplete", create(201, "p-other")).namespace, "p-other", "the path's namespace wins");
    assert.equal(ref("RequestReceived", create(201)).name, undefined, "nothing is created yet");
    assert.equal(ref("ResponseComplete", create(409)).name, undefined, "a refused create names nothing");
  });

  it("auditEventLine() reads a create's name from its pre-encoded answer, and decodes the answer when it must", () => {
    const ref = (responseJson: string) => {
      const request = completion({
        method: "POST",
        requestInfo: { ...completion().requestInfo, verb: "create", name: "", namespace: "" },
        code: 201,
        responseJson,
        // What decoding the answer gives: only used when the text cannot be read in place.
        responseObject: JSON.parse(responseJson),
      });
      return JSON.parse(auditEventLine("ResponseComplete", "Metadata", request, request, received)).objectRef;
    };
    const encoded = (metadata: Record<string, unknown>) =>
      JSON.stringify({ apiVersion: "management.platform.sh/v1", kind: "User", metadata, spec: { email: "a@b" } });
    assert.equal(ref(encoded({ resourceVersion: "7", name: "alice", labels: { a: "b" } })).name, "alice");
    assert.equal(ref(encoded({ resourceVersion: "7", name: 'q"uote' })).name, 'q"uote', "an escaped name");
    assert.equal(ref(encoded({ name: "first", resourceVersion: "7" })).name, "first", "another member order");
    const namespaced = ref(encoded({ resourceVersion: "7", name: "web", namespace: "team-a" }));
    assert.deepEqual([namespaced.name, namespaced.namespace], ["web", "team-a"]);
    const labelled = ref(encoded({ resourceVersion: "7", name: "x", labels: { namespace: "not-it" } }));
    assert.deepEqual([labelled.name, labelled.namespace], ["x", undefined]);
  });

  it("auditEventLine() adds the request object at Request and both objects at RequestResponse", () => {
    const request = JSON.parse(auditEventLine("ResponseComplete", "Request", completion(), completion(), received));
    assert.deepEqual(request.requestObject, { kind: "User", spec: { email: "a@example.com" } });
    assert.equal(request.responseObject, undefined);
    const both = JSON.parse(
      auditEventLine("ResponseComplete", "RequestResponse", completion(), completion(), received),
    );
    assert.ok(both.requestObject && both.responseObject);
    const receivedStage = JSON.parse(
      auditEventLine("RequestReceived", "RequestResponse", completion(), undefined, received),
    );
    assert.equal(receivedStage.requestObject, undefined);
    assert.equal(receivedStage.responseStatus, undefined);
  });

  it("auditEventLine() writes failures with reason and message, and unauthenticated callers as anonymous", () => {
    const failed = completion({ user: undefined, code: 401, reason: "Unauthorized", message: "invalid bearer token" });
    const event = JSON.parse(auditEventLine("ResponseComplete", "Metadata", failed, failed, received));
    assert.deepEqual(event.responseStatus, {
      metadata: {},
      status: "Failure",
      message: "invalid bearer token",
      reason: "Unauthorized",
      code: 401,
    });
    assert.deepEqual(event.user, { username: "system:anonymous", groups: ["system:unauthenticated"] });
  });

  it("auditEventLine() omits payloads above 2 MiB with an annotation saying so", () => {
    const big = { data: "x".repeat(MAX_PAYLOAD_BYTES + 10) };
    let decoded = false;
    const c = completion({
      requestBytes: MAX_PAYLOAD_BYTES + 100,
      requestObject: () => {
        decoded = true;
        return big;
      },
      responseObject: big,
    });
    const line = auditEventLine("ResponseComplete", "RequestResponse", c, c, received);
    assert.ok(line.length < 4096, "the line stays small");
    const event = JSON.parse(line);
    assert.equal(decoded, false, "an oversized body is not even decoded");
    assert.equal(event.requestObject, undefined);
    assert.equal(event.responseObject, undefined);
    assert.match(
      event.annotations[OMITTED_REQUEST_ANNOTATION],
      /payload of 2097252 bytes exceeds the 2097152-byte limit/,
    );
    assert.match(event.annotations[OMITTED_RESPONSE_ANNOTATION], /exceeds the 2097152-byte limit/);
  });

  it("auditEventLine() counts bytes, not characters, against the limit", () => {
    const c = completion({ responseObject: { data: "é".repeat(MAX_PAYLOAD_BYTES / 2) } });
    const event = JSON.parse(auditEventLine("ResponseComplete", "RequestResponse", c, c, received));
    assert.equal(event.responseObject, undefined);
    assert.ok(event.annotations[OMITTED_RESPONSE_ANNOTATION]);
  });

  it("microTime() writes RFC 3339 with microseconds", () => {
    assert.equal(microTime(new Date("2024-01-02T03:04:05.006Z")), "2024-01-02T03:04:05.006000Z");
  });

  it("auditEventLine() is JSON.stringify of the Event in kube-apiserver's member order, for every line shape, also when a caller's parts are reused", () => {
    fc.assert(
      // A case, then one that differs from it in a field or two: cached parts must not stand in for the second.
      fc.property(rawCase, rawCase, fc.subarray(Object.keys(RAW_KEYS), { maxLength: 2 }), (a, b, keys) => {
        const mixed = { ...a };
        for (const key of keys) Object.assign(mixed, { [key]: b[key as keyof typeof b] });
        for (const c of [toCase(a), toCase(mixed), toCase(a)]) {
          const line = auditEventLine(c.stage, c.level, c.request, c.completion, c.now);
          assert.equal(line, referenceLine(c));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("auditEventPieces() gives pieces whose UTF-8 bytes are those of the line, and reuses the array it is given", () => {
    const out: LinePiece[] = new Array(40).fill("stale");
    fc.assert(
      fc.property(lineCase, (c) => {
        const count = auditEventPieces(out, c.stage, c.level, c.request, c.completion, c.now.getTime());
        const bytes = Buffer.concat(out.slice(0, count).map((piece) => Buffer.from(pieceText(piece))));
        assert.deepEqual(bytes, Buffer.from(referenceLine(c)));
        assert.equal(out.length, 40, "the array is written in place");
      }),
      { numRuns: 300 },
    );
  });
});

// Text with the characters JSON escapes or encodes specially: quotes, backslashes, control characters, non-ASCII.
const text = fc.string({
  unit: fc.constantFrom("a", "Z", "0", "-", '"', "\\", "\n", "\u0001", "é", "😀", "/", "?", "="),
});
// A few values each, so that consecutive cases often share a caller (and the logger's cached parts are reused).
const users = [
  undefined,
  { name: "admin", uid: "u-1", groups: ["system:authenticated"] },
  { name: 'zoë "q"', groups: [], extra: { "a/b": ["c"] } },
];
const RAW_KEYS = {
  id: fc.oneof(fc.uuid(), fc.constantFrom("a-1", "id:2.x_"), text),
  requestUri: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom("/apis/g/v1/users/a", "/auth/password/login?code=secret&x=1"),
    text,
  ),
  verb: fc.constantFrom("get", "create", "list", "delete"),
  resourceRequest: fc.boolean(),
  group: fc.constantFrom("", "management.platform.sh"),
  resource: fc.constantFrom("users", "teams", ""),
  namespace: fc.constantFrom("", "p-a"),
  name: fc.oneof(fc.constantFrom("", "a", "b"), text),
  subresource: fc.constantFrom("", "status"),
  user: fc.constantFrom(...users),
  userAgent: fc.option(fc.constantFrom("kubectl/v1.32", "agent é"), { nil: undefined }),
  sourceIp: fc.option(fc.constantFrom("127.0.0.1", "::1"), { nil: undefined }),
  stage: fc.constantFrom<AuditStage>("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"),
  level: fc.constantFrom<AuditLevel>("Metadata", "Request", "RequestResponse"),
  code: fc.constantFrom(200, 201, 404, 500),
  reason: fc.option(text, { nil: undefined }),
  message: fc.option(text, { nil: undefined }),
  response: fc.option(
    fc.oneof(fc.dictionary(text, text, { maxKeys: 3 }), fc.constantFrom({ token: "t" }, { tokex: "t" })),
    {
      nil: undefined,
    },
  ),
  encoded: fc.boolean(),
  body: fc.option(fc.dictionary(text, text, { maxKeys: 2 }), { nil: undefined }),
  received: fc.integer({ min: 0, max: 4_000_000_000_000 }),
  elapsed: fc.integer({ min: 0, max: 3 }),
};
const rawCase = fc.record(RAW_KEYS);
type RawCase = typeof rawCase extends fc.Arbitrary<infer T> ? T : never;
const lineCase = rawCase.map(toCase);

function toCase(c: RawCase) {
  const request: AuditCompletion = {
    ...completionOf(c),
    responseJson: c.encoded && c.response ? JSON.stringify(c.response) : undefined,
    requestObject: c.body ? () => c.body : undefined,
  };
  return {
    stage: c.stage,
    level: c.level,
    request: request as AuditRequest,
    completion: c.stage === "RequestReceived" ? undefined : request,
    now: new Date(c.received + c.elapsed),
  };
}

/** The line built the plain way: one object, members in kube-apiserver's order, one JSON.stringify. */
function referenceLine(c: {
  stage: AuditStage;
  level: AuditLevel;
  request: AuditRequest;
  completion: AuditCompletion | undefined;
  now: Date;
}): string {
  const { request, completion } = c;
  const info = request.requestInfo;
  const micro = (date: Date) => `${date.toISOString().slice(0, -1)}000Z`;
  const user = request.user;
  const event: Record<string, unknown> = {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: c.level,
    auditID: request.id,
    stage: c.stage,
    requestURI: auditRequestUri(request.requestUri ?? info.path),
    verb: info.verb,
    user: user
      ? {
          username: user.name,
          ...(user.uid ? { uid: user.uid } : {}),
          groups: user.groups,
          ...(user.extra ? { extra: user.extra } : {}),
        }
      : { username: "system:anonymous", groups: ["system:unauthenticated"] },
    sourceIPs: request.sourceIp ? [request.sourceIp] : [],
  };
  if (request.userAgent) event.userAgent = request.userAgent;
  if (info.resourceRequest) {
    const ref: Record<string, string> = { resource: info.resource };
    const created = !info.name && info.verb === "create" && completion && completion.code < 300;
    const metadata = created ? (completion.responseObject as { metadata?: Record<string, unknown> })?.metadata : {};
    const namespace = info.namespace || (metadata?.namespace as string | undefined);
    const name = info.name || (metadata?.name as string | undefined);
    if (namespace) ref.namespace = namespace;
    if (name) ref.name = name;
    if (info.group) ref.apiGroup = info.group;
    ref.apiVersion = info.version;
    if (info.subresource) ref.subresource = info.subresource;
    event.objectRef = ref;
  }
  if (completion) {
    event.responseStatus =
      completion.code < 400 && !completion.reason
        ? { metadata: {}, code: completion.code }
        : {
            metadata: {},
            status: "Failure",
            ...(completion.message ? { message: completion.message } : {}),
            ...(completion.reason ? { reason: completion.reason } : {}),
            code: completion.code,
          };
  }
  event.requestReceivedTimestamp = micro(request.receivedAt);
  event.stageTimestamp = micro(c.now);
  const withObjects = completion && c.stage !== "ResponseStarted";
  const body = withObjects && c.level !== "Metadata" ? completion.requestObject?.() : undefined;
  const response = withObjects && c.level === "RequestResponse" ? completion.responseObject : undefined;
  let line = JSON.stringify(event).slice(0, -1);
  if (body !== undefined) line += `,"requestObject":${auditJson(body)}`;
  if (response !== undefined) line += `,"responseObject":${auditJson(response)}`;
  return `${line}}`;
}
