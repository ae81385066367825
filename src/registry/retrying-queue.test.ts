import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { RetryingQueue } from "./retrying-queue.ts";

/** Lets settled promises' callbacks run (setImmediate is not mocked). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("RetryingQueue", () => {
  it("RetryingQueue.run() retries a failed task through again() after doubling waits up to the maximum", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const failures: string[] = [];
      const queue = new RetryingQueue({ firstRetryMs: 100, maxRetryMs: 400, failed: (key) => failures.push(key) });
      let runs = 0;
      const schedule = () =>
        queue.run(
          "a",
          async () => {
            runs++;
            throw new Error("not yet");
          },
          schedule,
        );
      schedule();
      await settle();
      for (const wait of [100, 200, 400, 400]) {
        const before = runs;
        mock.timers.tick(wait - 1);
        await settle();
        assert.equal(runs, before, `not before ${wait} ms`);
        mock.timers.tick(1);
        await settle();
        assert.equal(runs, before + 1, `again after ${wait} ms`);
      }
      assert.equal(failures.length, 5);
      queue.stop();
    } finally {
      mock.timers.reset();
    }
  });

  it("RetryingQueue.run() runs one task per key at a time, in order", async () => {
    const queue = new RetryingQueue({ firstRetryMs: 1, maxRetryMs: 1 });
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    queue.run(
      "k",
      async () => {
        await gate;
        order.push("first");
      },
      () => {},
    );
    await settle();
    const done = new Promise<void>((resolve) => {
      queue.run(
        "k",
        async () => {
          order.push("second");
          resolve();
        },
        () => {},
      );
    });
    order.push("queued");
    release();
    await done;
    assert.deepEqual(order, ["queued", "first", "second"]);
    queue.stop();
  });

  it("RetryingQueue.run() queues at most one task per key behind the running one", async () => {
    const queue = new RetryingQueue({ firstRetryMs: 1, maxRetryMs: 1 });
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let finished!: () => void;
    const done = new Promise<void>((resolve) => {
      finished = resolve;
    });
    const task = async () => {
      runs++;
      if (runs === 1) await gate;
      else finished();
    };
    queue.run("k", task, () => {});
    await settle();
    for (let i = 0; i < 100; i++) queue.run("k", task, () => {});
    release();
    await done;
    await settle();
    assert.equal(runs, 2, "the running task, then one for the hundred scheduled while it ran");
    queue.run("k", task, () => {});
    await settle();
    assert.equal(runs, 3, "a key runs again once nothing of it waits");
    queue.stop();
  });

  it("RetryingQueue.forget() drops a key's retry: keys that failed and went leave nothing behind", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const queue = new RetryingQueue({ firstRetryMs: 100, maxRetryMs: 400 });
      let again = 0;
      for (let i = 0; i < 1_000; i++) {
        queue.run(
          `gone-${i}`,
          async () => {
            throw new Error("not yet");
          },
          () => again++,
        );
      }
      await settle();
      assert.equal(queue.retrying, 1_000);
      for (let i = 0; i < 1_000; i++) queue.forget(`gone-${i}`);
      assert.equal(queue.retrying, 0);
      mock.timers.tick(1_000);
      await settle();
      assert.equal(again, 0, "no retry fires for a forgotten key");
      queue.stop();
    } finally {
      mock.timers.reset();
    }
  });

  it("RetryingQueue.stop() cancels a waiting retry and refuses new tasks", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      let again = 0;
      let ran = false;
      const queue = new RetryingQueue({ firstRetryMs: 50, maxRetryMs: 50 });
      queue.run(
        "k",
        async () => {
          throw new Error("no");
        },
        () => again++,
      );
      await settle();
      queue.stop();
      queue.run(
        "k",
        async () => {
          ran = true;
        },
        () => {},
      );
      mock.timers.tick(1_000);
      await settle();
      assert.equal(again, 0);
      assert.equal(ran, false);
    } finally {
      mock.timers.reset();
    }
  });
});
