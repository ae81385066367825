import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  auditEventLine,
  MAX_PAYLOAD_BYTES,
  microTime,
  OMITTED_REQUEST_ANNOTATION,
  OMITTED_RESPONSE_ANNOTATION,
} from "./event.ts";
import type { AuditCompletion } from "./types.ts";

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
});
