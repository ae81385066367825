import assert from "node:assert/strict";
import { test } from "node:test";
import type { WatchCloseReason, WatchEvent } from "./types.ts";
import { WatchHub } from "./watch-hub.ts";

/** A hub over an in-memory log; `commit` appends events and publishes them like the append path does. */
function setup(bufferLimit: number, historyPageSize?: number, deliverySlice?: number) {
  const log: WatchEvent[] = [];
  const hub = new WatchHub({
    bufferLimit,
    historyPageSize,
    deliverySlice,
    source: {
      revision: () => log.length,
      compactedRevision: () => 0,
      history: (prefix, after, limit) =>
        log.filter((e) => e.record.revision > after && e.record.key.startsWith(prefix)).slice(0, limit),
    },
  });
  const commit = (count: number) => {
    const events: WatchEvent[] = [];
    for (let i = 0; i < count; i++) {
      const revision = log.length + 1;
      const event: WatchEvent = {
        type: "create",
        record: { key: `/k/${revision}`, value: "v", revision, createRevision: revision },
      };
      log.push(event);
      events.push(event);
    }
    hub.publish(events);
  };
  return { hub, commit };
}

function record(hub: WatchHub, afterRevision: number, onEvents: (events: WatchEvent[]) => boolean | undefined) {
  const closes: WatchCloseReason[] = [];
  const watcher = hub.watch({ prefix: "/k/", afterRevision, onEvents, onClose: (reason) => closes.push(reason) });
  return { watcher, closes };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test("WatchHub never delivers inside publish(); events arrive in a later macrotask", async () => {
  const { hub, commit } = setup(10);
  const seen: number[] = [];
  record(hub, 0, (events) => {
    seen.push(...events.map((e) => e.record.revision));
    return true;
  });
  commit(2);
  assert.deepEqual(seen, []);
  await turn();
  assert.deepEqual(seen, [1, 2]);
});

test("WatchHub takes a commit larger than the buffer limit when the watcher's queue is empty", async () => {
  const { hub, commit } = setup(10);
  const seen: number[] = [];
  const { closes } = record(hub, 0, (events) => {
    seen.push(...events.map((e) => e.record.revision));
    return true;
  });
  commit(25);
  await turn();
  assert.equal(seen.length, 25);
  assert.deepEqual(closes, []);
});

test("WatchHub closes a watch whose onEvents throws and keeps serving the others", async () => {
  const { hub, commit } = setup(10);
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on("warning", onWarning);
  const broken = record(hub, 0, () => {
    throw new Error("consumer bug");
  });
  const seen: number[] = [];
  const healthy = record(hub, 0, (events) => {
    seen.push(...events.map((e) => e.record.revision));
    return true;
  });
  commit(1);
  await turn();
  commit(1);
  await turn();
  await turn();
  process.off("warning", onWarning);
  assert.deepEqual(broken.closes, [{ kind: "closed" }]);
  assert.deepEqual(healthy.closes, []);
  assert.deepEqual(seen, [1, 2]);
  assert.equal(hub.size, 1);
  assert.ok(warnings.some((w) => w.includes("consumer bug")));
});

test("WatchHub does not cut off a paused watcher that is still reading history", async () => {
  const { hub, commit } = setup(5, 5);
  commit(20);
  const seen: number[] = [];
  let pause = true;
  const { watcher, closes } = record(hub, 1, (events) => {
    seen.push(...events.map((e) => e.record.revision));
    return !pause;
  });
  for (let i = 0; i < 5; i++) {
    commit(3);
    await turn();
  }
  assert.deepEqual(seen, [2, 3, 4, 5, 6], "one page, then paused");
  assert.deepEqual(closes, []);
  pause = false;
  watcher.resume();
  while (seen.length < 34) await turn();
  assert.deepEqual(
    seen,
    Array.from({ length: 34 }, (_, i) => i + 2),
  );
  assert.deepEqual(closes, []);
});

test("WatchHub.close() reports a pending slow cut-off instead of closed, once", async () => {
  const { hub, commit } = setup(3);
  const { closes } = record(hub, 0, () => false);
  commit(1);
  await turn();
  commit(3);
  commit(3);
  hub.close();
  await turn();
  assert.deepEqual(closes, [{ kind: "slow" }]);
  assert.equal(hub.size, 0);
});

test("WatchHub delivers a fan-out in slices, one per macrotask, each watcher in revision order", async () => {
  const { hub, commit } = setup(100, undefined, 4);
  const seen: number[][] = [];
  for (let i = 0; i < 10; i++) {
    const mine: number[] = [];
    seen.push(mine);
    record(hub, 0, (events) => {
      mine.push(...events.map((e) => e.record.revision));
      return true;
    });
  }
  commit(1);
  await turn();
  const afterFirstSlice = seen.filter((s) => s.length > 0).length;
  assert.equal(afterFirstSlice, 4, "one slice of four watchers, the rest later (writes can run in between)");
  // A commit between slices: watchers not yet served receive both batches together, in order.
  commit(2);
  for (let i = 0; i < 20; i++) await turn();
  for (const revisions of seen) assert.deepEqual(revisions, [1, 2, 3]);
});
