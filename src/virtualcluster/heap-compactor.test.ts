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

test("HeapCompactor with settleMs compacts at start only once work stopped for that long, waiting at most quietMs", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const calls: unknown[] = [];
  let work = 0;
  const settling = () =>
    new HeapCompactor({ gc: (options) => calls.push(options), work: () => work, settleMs: 100, quietMs: 1_000 });
  const compactor = settling();
  compactor.start();
  assert.equal(calls.length, 0, "not while start-up may still be working");
  work++;
  t.mock.timers.tick(100);
  assert.equal(calls.length, 0, "the first syncs went on");
  t.mock.timers.tick(100);
  assert.equal(calls.length, 1, "once they stopped");
  t.mock.timers.tick(1_000);
  assert.equal(calls.length, 1, "then as after any compaction: nothing more while idle");

  const busy = settling();
  busy.start();
  for (let i = 0; i < 9; i++) {
    work++;
    t.mock.timers.tick(100);
  }
  assert.equal(calls.length, 1, "not while work goes on");
  work++;
  t.mock.timers.tick(100);
  assert.equal(calls.length, 2, "but not past quietMs");
  compactor.stop();
  busy.stop();
});
