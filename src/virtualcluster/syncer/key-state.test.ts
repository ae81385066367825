import assert from "node:assert/strict";
import { test } from "node:test";
import { currentHost } from "./key-state.ts";
import { formatKey, isOrphan, orphanKey, parseKey } from "./keys.ts";

const object = (uid: string, resourceVersion: string) => ({ metadata: { name: "x", uid, resourceVersion } });

test("currentHost() uses our own write only while the informer has delivered nothing at or past it", () => {
  const cached = object("u", "5");
  const written = object("u", "7");
  const state = () => ({ written: { object: written, epoch: 1 } });
  assert.equal(currentHost(cached, undefined, { epoch: 1, resourceVersion: "5" }), cached);
  assert.equal(currentHost(cached, state(), { epoch: 1, resourceVersion: "6" }), written, "not seen yet");
  const caughtUp = state();
  assert.equal(currentHost(undefined, caughtUp, { epoch: 1, resourceVersion: "8" }), undefined, "deleted after it");
  assert.equal(caughtUp.written, undefined, "the overlay is gone for good");
  assert.equal(currentHost(cached, state(), { epoch: 2, resourceVersion: "3" }), cached, "a re-list decides");
  assert.equal(currentHost(cached, state(), { epoch: 1, resourceVersion: "x" }), cached, "not a revision");
});

test("currentHost() hides a deleted object only while the cache still holds its uid", () => {
  const progress = { epoch: 1, resourceVersion: "9" };
  assert.equal(currentHost(object("u", "5"), { written: { deletedUid: "u" } }, progress), undefined);
  const recreated = object("v", "9");
  assert.equal(currentHost(recreated, { written: { deletedUid: "u" } }, progress), recreated);
  assert.equal(currentHost(undefined, { written: { deletedUid: "u" } }, progress), undefined);
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
