import assert from "node:assert/strict";
import { test } from "node:test";
import { HeapCompactor } from "./heap-compactor.ts";

test("HeapCompactor compacts at start, then once after each burst of work, never while busy or idle", () => {
  const calls: unknown[] = [];
  let work = 0;
  const compactor = new HeapCompactor({ gc: (options) => calls.push(options), work: () => work });
  compactor.start();
  assert.deepEqual(calls, [{ type: "major", execution: "sync", flavor: "last-resort" }], "start-up is over");
  compactor.look();
  compactor.look();
  assert.equal(calls.length, 1, "idle: nothing more to give back");
  for (let i = 0; i < 3; i++) {
    work += 10;
    compactor.look();
  }
  assert.equal(calls.length, 1, "not while work goes on");
  compactor.look();
  assert.equal(calls.length, 2, "once when it stopped");
  compactor.look();
  assert.equal(calls.length, 2, "and not again until more work");
  work++;
  compactor.look();
  compactor.look();
  assert.equal(calls.length, 3);
  compactor.stop();
});
