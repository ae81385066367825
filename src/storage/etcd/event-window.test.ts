import assert from "node:assert/strict";
import { test } from "node:test";
import type { WatchEvent } from "../types.ts";
import { EventWindow } from "./event-window.ts";

const event = (key: string, revision: number): WatchEvent => ({
  type: "create",
  record: { key, value: "v", revision, createRevision: revision },
});

test("EventWindow.after() serves events after a revision by prefix, and nothing once they were evicted", () => {
  const window = new EventWindow({ capacity: 3, floor: 10 });
  window.append([event("/a/1", 12), event("/b/1", 13)]);
  assert.deepEqual(
    window.after("/a/", 10, 10)?.map((e) => e.record.revision),
    [12],
  );
  assert.deepEqual(
    window.after("/", 12, 10)?.map((e) => e.record.revision),
    [13],
  );
  assert.equal(window.after("/", 9, 10), undefined, "before the floor: not in the window");
  window.append([event("/a/2", 15), event("/a/3", 16)]);
  assert.equal(window.size, 3);
  assert.equal(window.floor, 12, "the evicted event's revision is the new floor");
  assert.equal(window.after("/", 11, 10), undefined);
  assert.deepEqual(
    window.after("/a/", 12, 1)?.map((e) => e.record.revision),
    [15],
    "limit",
  );
});

test("EventWindow.lastChangeAtOrBelow() is the newest change not after a revision, else the floor", () => {
  const window = new EventWindow({ capacity: 100, floor: 5 });
  assert.equal(window.lastChangeAtOrBelow(9), 5);
  window.append([event("/a", 7), event("/b", 9)]);
  assert.equal(window.lastChangeAtOrBelow(8), 7);
  assert.equal(window.lastChangeAtOrBelow(9), 9);
  assert.equal(window.lastChangeAtOrBelow(20), 9);
  assert.equal(window.lastChangeAtOrBelow(6), 5);
  window.reset(30);
  assert.equal(window.lastChangeAtOrBelow(40), 30);
  assert.equal(window.size, 0);
});
