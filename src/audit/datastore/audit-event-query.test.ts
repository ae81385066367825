import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStatusError } from "../../apimachinery/errors.ts";
import { auditEventObject, auditSearchOf, decodeCursor, encodeCursor } from "./audit-event-query.ts";

const NOW = Date.parse("2026-11-25T12:00:00Z");
const badRequest = (fn: () => unknown, message: RegExp) =>
  assert.throws(fn, (error) => isStatusError(error) && error.code === 400 && message.test(error.message));

describe("auditSearchOf", () => {
  it("auditSearchOf() maps field selectors to datastore filters and a time range", () => {
    const search = auditSearchOf(
      {
        fieldSelector:
          "user.username=alice,verb!=get,objectRef.resource==users,responseStatus.code=403,metadata.name=x,since=2h,until=2026-11-25T11:30:00Z",
        limit: 20,
      },
      NOW,
    );
    const byColumn = (a: { column: string }, b: { column: string }) => a.column.localeCompare(b.column);
    assert.deepEqual(
      [...search.filters].sort(byColumn),
      [
        { column: "username", equals: true, value: "alice" },
        { column: "verb", equals: false, value: "get" },
        { column: "resource", equals: true, value: "users" },
        { column: "code", equals: true, value: 403 },
        { column: "auditID", equals: true, value: "x" },
      ].sort(byColumn),
    );
    assert.equal(search.since, NOW - 2 * 3_600_000);
    assert.equal(search.until, Date.parse("2026-11-25T11:30:00Z"));
    assert.equal(search.limit, 20);
    assert.equal(auditSearchOf({}, NOW).limit, 500, "kubectl's page size when none is asked for");
    assert.equal(auditSearchOf({ limit: 1_000_000 }, NOW).limit, 5_000, "a page is bounded");
  });

  it("auditSearchOf() refuses what it cannot answer with a 400 that says what is accepted", () => {
    badRequest(
      () => auditSearchOf({ fieldSelector: "spec.x=1" }, NOW),
      /field label not supported: spec\.x .*user\.username/,
    );
    badRequest(() => auditSearchOf({ fieldSelector: "since=last-week" }, NOW), /RFC 3339/);
    badRequest(() => auditSearchOf({ fieldSelector: "since!=1h" }, NOW), /takes = only/);
    badRequest(() => auditSearchOf({ fieldSelector: "responseStatus.code=teapot" }, NOW), /HTTP status code/);
    badRequest(() => auditSearchOf({ labelSelector: "app=x" }, NOW), /no labels/);
    badRequest(() => auditSearchOf({ continue: "bm90IGEgY3Vyc29y" }, NOW), /continue key is not valid/);
  });

  it("encodeCursor() and decodeCursor() round-trip a page's end", () => {
    const cursor = { time: NOW, id: 42, snapshot: 99 };
    assert.deepEqual(decodeCursor(encodeCursor(cursor)), cursor);
    assert.deepEqual(auditSearchOf({ continue: encodeCursor(cursor) }, NOW).after, cursor);
  });

  it("auditEventObject() wraps a stored line as an AuditEvent named by its audit ID", () => {
    const line = JSON.stringify({ kind: "Event", auditID: "a-1", stage: "ResponseComplete", verb: "get" });
    assert.deepEqual(auditEventObject({ id: 1, time: NOW + 123, instance: "p-x/vc", line }), {
      apiVersion: "management.platform.sh/v1",
      kind: "AuditEvent",
      metadata: { name: "a-1", creationTimestamp: "2026-11-25T12:00:00Z" },
      event: JSON.parse(line),
      instance: "p-x/vc",
    });
  });
});
