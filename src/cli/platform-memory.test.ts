import assert from "node:assert/strict";
import { test } from "node:test";
import { HeapCompactor } from "../virtualcluster/heap-compactor.ts";
import { missingNodeFlags } from "../virtualcluster/runtime-node-flags.ts";
import { cpuBursts, PLATFORM_NODE_FLAGS } from "./platform-memory.ts";

test("cpuBursts() counts only the looks in which the process used more CPU than the threshold", () => {
  let cpu = 1_000;
  const work = cpuBursts(() => cpu, 100);
  cpu += 40; // idle timers
  assert.equal(work(), 0);
  cpu += 500; // a burst of requests
  assert.equal(work(), 1);
  assert.equal(work(), 1); // quiet again: HeapCompactor compacts on this look
  cpu += 101;
  assert.equal(work(), 2);
});

test("an idle platform compacts once after a burst, not again for the CPU its own compaction used", () => {
  let cpu = 1_000;
  let compactions = 0;
  const compactor = new HeapCompactor({
    gc: () => {
      compactions++;
      cpu += 150; // a full collection of a few tens of MiB, its helper threads included
    },
    work: cpuBursts(() => cpu, 100),
  });
  compactor.start(); // start-up is over: one compaction
  cpu += 500; // a burst of requests
  compactor.look();
  for (let look = 0; look < 20; look++) {
    cpu += 80; // idle timers, under the threshold
    compactor.look();
  }
  assert.equal(compactions, 2, "once at start, once after the burst");
  compactor.stop();
});

test("PLATFORM_NODE_FLAGS cap the young generation and expose gc(), unless the user gave a value", () => {
  assert.deepEqual(missingNodeFlags(PLATFORM_NODE_FLAGS, [], undefined), ["--max-semi-space-size=8", "--expose-gc"]);
  assert.deepEqual(missingNodeFlags(PLATFORM_NODE_FLAGS, [], "--max-semi-space-size=32 --expose-gc"), []);
});
