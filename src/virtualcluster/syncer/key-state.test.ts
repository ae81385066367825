import assert from "node:assert/strict";
import { test } from "node:test";
import { caughtUp, currentHost } from "./key-state.ts";
import { formatKey, isOrphan, orphanKey, parseKey } from "./keys.ts";

const object = (uid: string, resourceVersion: string) => ({ metadata: { name: "x", uid, resourceVersion } });

test("currentHost() prefers our own last write until the informer has caught up", () => {
  const cached = object("u", "5");
  assert.equal(currentHost(cached, undefined), cached);
  const written = object("u", "7");
  assert.equal(currentHost(cached, { written: { object: written } }), written);
  assert.equal(currentHost(cached, { written: { deletedUid: "u" } }), undefined);
});

test("caughtUp() is true once the informer shows our write or anything newer", () => {
  const written = { object: object("u", "7") };
  assert.equal(caughtUp(written, "update", object("u", "6")), false);
  assert.equal(caughtUp(written, "update", object("u", "7")), true);
  assert.equal(caughtUp(written, "update", object("u", "12")), true, "numerically newer");
  const deleted = { deletedUid: "u" };
  assert.equal(caughtUp(deleted, "update", object("u", "8")), false, "an older event of the deleted object");
  assert.equal(caughtUp(deleted, "delete", object("u", "8")), true);
  assert.equal(caughtUp(deleted, "add", object("v", "9")), true, "a new object of the same name");
});

test("parseKey() reverses formatKey() and orphanKey()", () => {
  assert.deepEqual(parseKey(formatKey("endpoints", "team-a", "web")), {
    resource: "endpoints",
    namespace: "team-a",
    name: "web",
  });
  const orphan = parseKey(orphanKey("secrets", "s-x-ns-x-vc"));
  assert.deepEqual(orphan, { resource: "secrets", namespace: "", name: "s-x-ns-x-vc" });
  assert.equal(isOrphan(orphan), true);
});
