import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ThreadCpuClock } from "./thread-cpu-clock.ts";

test("ThreadCpuClock.atMost() shares one reading within the slack and reads afresh past it", () => {
  let cpu = 10;
  let reads = 0;
  const clock = new ThreadCpuClock({
    read: () => {
      reads++;
      return cpu;
    },
  });
  assert.equal(clock.atMost(1000, 5), 10);
  cpu = 12;
  assert.equal(clock.atMost(1003, 5), 13, "the reading of 10 at 1000 plus 3 ms of wall time");
  assert.equal(reads, 1);
  assert.equal(clock.atMost(1006, 5), 12, "6 ms after the reading: a fresh one");
  assert.equal(reads, 2);
  assert.equal(clock.now(1006), 12);
  assert.equal(reads, 3);
  assert.equal(clock.atMost(1005, 5), 12, "a wall clock behind the reading: a fresh one");
  assert.equal(reads, 4);
});

test("ThreadCpuClock.atMost() is never below the thread's clock and at most the slack above it", () => {
  // A thread whose CPU time advances by at most the wall time between two calls, as every thread's does.
  const step = fc.record({
    wall: fc.double({ min: 0, max: 20, noNaN: true }),
    share: fc.double({ min: 0, max: 1, noNaN: true }),
  });
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), fc.double({ min: 0, max: 10, noNaN: true }), (steps, slack) => {
      let wall = 500;
      let cpu = 40;
      const clock = new ThreadCpuClock({ read: () => cpu });
      for (const { wall: elapsed, share } of steps) {
        wall += elapsed;
        cpu += elapsed * share;
        const bound = clock.atMost(wall, slack);
        assert.ok(bound >= cpu - 1e-9, `${bound} below the clock ${cpu}`);
        assert.ok(bound <= cpu + slack + 1e-9, `${bound} more than ${slack} above the clock ${cpu}`);
      }
    }),
  );
});

test("ThreadCpuClock.now() reads this thread's CPU time, which busy work advances and a blocked wait does not", () => {
  const clock = new ThreadCpuClock();
  const before = clock.now(performance.now());
  let x = 0;
  const until = before + 20;
  while (clock.now(performance.now()) < until) x += Math.sqrt(x + 1);
  const waited = clock.now(performance.now());
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  assert.ok(clock.now(performance.now()) - waited < 50, "a 50 ms wait that used no CPU");
});
