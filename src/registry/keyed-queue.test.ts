import assert from "node:assert/strict";
import { it } from "node:test";
import { KeyedQueue } from "./keyed-queue.ts";

it("KeyedQueue.run() runs tasks of one key one after another, and other keys alongside", async () => {
  const queue = new KeyedQueue();
  const log: string[] = [];
  const task = (name: string, ms: number) => async () => {
    log.push(`${name} start`);
    await new Promise((resolve) => setTimeout(resolve, ms));
    log.push(`${name} end`);
  };
  await Promise.all([queue.run("a", task("a1", 20)), queue.run("a", task("a2", 1)), queue.run("b", task("b1", 1))]);
  assert.ok(log.indexOf("a1 end") < log.indexOf("a2 start"), "a2 waits for a1");
  assert.ok(log.indexOf("b1 start") < log.indexOf("a1 end"), "b1 does not wait for a1");
});

it("KeyedQueue.run() continues after a failed task", async () => {
  const queue = new KeyedQueue();
  await assert.rejects(queue.run("k", async () => Promise.reject(new Error("boom"))));
  assert.equal(await queue.run("k", async () => 42), 42);
});
