import assert from "node:assert/strict";
import { test } from "node:test";
import { ReferenceTracker } from "./reference-tracker.ts";

test("ReferenceTracker keeps a target referenced while any referrer names it and reports changes", () => {
  const tracker = new ReferenceTracker();
  assert.deepEqual(tracker.set("e1", ["s1", "s2"]), ["s1", "s2"]);
  assert.deepEqual(tracker.set("e2", ["s1"]), ["s1"]);
  assert.deepEqual(tracker.set("e1", ["s2"]), ["s1"]);
  assert.equal(tracker.isReferenced("s1"), true, "e2 still names s1");
  assert.deepEqual(tracker.set("e2", []), ["s1"]);
  assert.equal(tracker.isReferenced("s1"), false);
  assert.deepEqual(tracker.set("e1", ["s2"]), [], "no change");
  assert.equal(tracker.isReferenced("s2"), true);
});
