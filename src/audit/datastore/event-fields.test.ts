import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { auditEventLine } from "../event.ts";
import { completionOf } from "../testing-events.ts";
import type { AuditLevel, AuditStage } from "../types.ts";
import { auditEventFields, parsedEventFields } from "./event-fields.ts";

// Text with the characters JSON escapes or encodes specially: quotes, backslashes, control characters, non-ASCII.
const text = fc.string({
  unit: fc.constantFrom("a", "Z", "0", '"', "\\", "\n", "\u0001", "é", "😀", "/", ",", ":", "{"),
});
const name = fc.oneof(fc.constant(""), fc.stringMatching(/^[a-z0-9-]{1,12}$/), text);

const completion = fc.record({
  id: fc.oneof(fc.uuid(), text),
  requestUri: fc.oneof(fc.constant(undefined), text),
  verb: fc.oneof(fc.constantFrom("get", "create", "delete", "list"), text),
  group: fc.oneof(fc.constant(""), fc.constant("management.platform.sh"), text),
  resource: name,
  namespace: name,
  name,
  subresource: fc.oneof(fc.constant(""), name),
  resourceRequest: fc.boolean(),
  user: fc.option(
    fc.record({
      name: text,
      uid: fc.option(text, { nil: undefined }),
      groups: fc.array(text, { maxLength: 3 }),
      extra: fc.option(fc.dictionary(text, fc.array(text, { maxLength: 2 }), { maxKeys: 3 }), { nil: undefined }),
    }),
    { nil: undefined },
  ),
  userAgent: fc.option(text, { nil: undefined }),
  sourceIp: fc.option(fc.constantFrom("127.0.0.1", "::1"), { nil: undefined }),
  code: fc.constantFrom(200, 201, 404, 500, 0),
  reason: fc.option(text, { nil: undefined }),
  message: fc.option(text, { nil: undefined }),
  response: fc.option(fc.dictionary(text, fc.oneof(text, fc.integer())), { nil: undefined }),
  received: fc.integer({ min: 0, max: 4_000_000_000_000 }),
  elapsed: fc.integer({ min: 0, max: 10_000 }),
});

describe("auditEventFields()", () => {
  it("auditEventFields() reads the same fields as JSON.parse of the line, for every line event.ts writes", () => {
    fc.assert(
      fc.property(
        completion,
        fc.constantFrom<AuditStage>("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"),
        fc.constantFrom<AuditLevel>("Metadata", "Request", "RequestResponse"),
        (c, stage, level) => {
          const request = completionOf(c);
          const withCompletion = stage === "RequestReceived" ? undefined : request;
          const line = auditEventLine(stage, level, request, withCompletion, new Date(c.received + c.elapsed));
          assert.deepEqual(auditEventFields(line, 7), parsedEventFields(line, 7));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("auditEventFields() reads lines of any other member order or shape as JSON.parse does", () => {
    const member = fc.constantFrom(
      "kind",
      "level",
      "auditID",
      "stage",
      "verb",
      "user",
      "objectRef",
      "responseStatus",
      "stageTimestamp",
      "annotations",
    );
    const value = fc.oneof(
      text,
      fc.integer(),
      fc.constant(null),
      fc.record({ username: text, name: text, code: fc.integer(), resource: text }, { requiredKeys: [] }),
      fc.array(text, { maxLength: 2 }),
    );
    fc.assert(
      fc.property(fc.dictionary(member, value), (event) => {
        const line = JSON.stringify({ kind: "Event", ...event });
        assert.deepEqual(auditEventFields(line, 7), parsedEventFields(line, 7));
      }),
      { numRuns: 1000 },
    );
    assert.throws(() => auditEventFields("[1]", 0), /must be an object/);
    assert.throws(() => auditEventFields("not json", 0), SyntaxError);
  });

  it("auditEventFields() reads a RequestResponse line's head and leaves its payloads alone", () => {
    const line =
      '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"019ab3c1-5e2f-7d3a-9c41-0a1b2c3d4e5f",' +
      '"stage":"ResponseComplete","requestURI":"/apis/management.platform.sh/v1/users/bob?x=\\"y\\"","verb":"get",' +
      '"user":{"username":"alice","groups":["system:authenticated"],"extra":{"a}":["]{"]}},"sourceIPs":["::1"],' +
      '"objectRef":{"resource":"users","name":"bob","apiGroup":"management.platform.sh","apiVersion":"v1"},' +
      '"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-25T12:00:00.123000Z",' +
      '"stageTimestamp":"2026-11-25T12:00:00.125000Z","responseObject":{"verb":"delete","user":{"username":"mallory"}}}';
    assert.deepEqual(auditEventFields(line, 0), {
      auditID: "019ab3c1-5e2f-7d3a-9c41-0a1b2c3d4e5f",
      stage: "ResponseComplete",
      level: "RequestResponse",
      verb: "get",
      username: "alice",
      apiGroup: "management.platform.sh",
      resource: "users",
      namespace: "",
      name: "bob",
      code: 200,
      time: Date.parse("2026-11-25T12:00:00.125Z"),
    });
  });
});
