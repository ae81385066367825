import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { exponentialBackoff } from "./rate-limiter.ts";
import { type Timers, WorkQueue } from "./work-queue.ts";

/** Timers that fire only when the test advances time. */
function fakeTimers(): Timers & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let next = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  return {
    setTimeout(callback, ms) {
      const id = next++;
      timers.set(id, { at: now + ms, callback });
      return id;
    },
    clearTimeout: (handle) => void timers.delete(handle as number),
    advance(ms) {
      now += ms;
      for (const [id, timer] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at > now) continue;
        timers.delete(id);
        timer.callback();
      }
    },
    pending: () => timers.size,
  };
}

const newQueue = () => {
  const timers = fakeTimers();
  return { queue: new WorkQueue({ rateLimiter: exponentialBackoff(5, 1000), timers }), timers };
};

test("WorkQueue.add() keeps one entry per key and hands keys out in first-added order", async () => {
  const { queue } = newQueue();
  for (const key of ["a", "b", "a", "c", "b"]) queue.add(key);
  assert.equal(queue.length, 3);
  assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ["a", "b", "c"]);
});

test("WorkQueue hands a key to one worker at a time and again after done() when re-added", async () => {
  const { queue } = newQueue();
  queue.add("a");
  const key = await queue.get();
  assert.equal(key, "a");
  queue.add("a"); // an event while "a" is being processed
  queue.add("a");
  assert.equal(queue.length, 0, "not handed to a second worker");
  let second: string | undefined;
  void queue.get().then((k) => {
    second = k;
  });
  await Promise.resolve();
  assert.equal(second, undefined);
  queue.done("a");
  await Promise.resolve();
  assert.equal(second, "a", "handed out once more after done");
  queue.done("a");
  assert.equal(queue.length + queue.processing, 0);
});

test("WorkQueue.addRateLimited() backs off per key and forget() resets the backoff", async () => {
  const { queue, timers } = newQueue();
  assert.equal(queue.addRateLimited("a"), 5);
  timers.advance(4);
  assert.equal(queue.length, 0);
  timers.advance(1);
  assert.equal(queue.length, 1);
  assert.equal(await queue.get(), "a");
  queue.done("a");
  assert.equal(queue.addRateLimited("a"), 10);
  assert.equal(queue.addRateLimited("a"), 20, "the earlier pending add stays");
  assert.equal(queue.waiting, 1);
  timers.advance(10);
  assert.equal(queue.length, 1);
  queue.forget("a");
  assert.equal(queue.retries("a"), 0);
  assert.equal(queue.addRateLimited("a"), 5);
});

test("WorkQueue.addAfter() keeps the earliest due time of a key", () => {
  const { queue, timers } = newQueue();
  queue.addAfter("a", 100);
  queue.addAfter("a", 50);
  queue.addAfter("a", 80);
  assert.equal(timers.pending(), 1);
  timers.advance(50);
  assert.equal(queue.length, 1);
});

test("WorkQueue.shutDown() wakes waiting workers with undefined and drops delayed adds", async () => {
  const { queue, timers } = newQueue();
  const waiting = queue.get();
  queue.addAfter("a", 10);
  queue.shutDown();
  assert.equal(await waiting, undefined);
  assert.equal(timers.pending(), 0);
  queue.add("b");
  assert.equal(await queue.get(), undefined);
});

test("WorkQueue never hands out a key twice concurrently, whatever the order of adds and dones", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.oneof(
          fc.constantFrom("a", "b", "c").map((key) => ({ add: key })),
          fc.constant({ step: true }),
        ),
        {
          maxLength: 60,
        },
      ),
      async (operations) => {
        const { queue } = newQueue();
        const busy = new Set<string>();
        const added = new Set<string>();
        for (const operation of operations) {
          if ("add" in operation) {
            queue.add(operation.add);
            added.add(operation.add);
            continue;
          }
          if (queue.length > 0) {
            const key = (await queue.get())!;
            assert.ok(!busy.has(key), `${key} handed out while busy`);
            busy.add(key);
          } else if (busy.size > 0) {
            const [key] = busy;
            busy.delete(key);
            queue.done(key);
          }
        }
        // Drain: every added key is eventually processed and the queue empties.
        for (const key of busy) queue.done(key);
        const seen = new Set<string>();
        while (queue.length > 0) {
          const key = (await queue.get())!;
          seen.add(key);
          queue.done(key);
        }
        assert.equal(queue.length + queue.processing, 0);
        for (const key of seen) assert.ok(added.has(key));
      },
    ),
  );
});
