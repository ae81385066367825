import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { cpuContention, parseRunQueueWaitNs } from "./cpu-contention.ts";

describe("cpuContention", () => {
  it("parseRunQueueWaitNs() reads the run-queue wait of a schedstat line, and nothing from other text", () => {
    assert.equal(parseRunQueueWaitNs("438301 63254 1\n"), 63254);
    assert.equal(parseRunQueueWaitNs(""), undefined);
    assert.equal(parseRunQueueWaitNs("12 x 3"), undefined);
  });

  it("cpuContention() is true once the thread waited for a CPU a tenth of the last interval or more", () => {
    let clock = 0;
    let waitNs = 0;
    const contended = cpuContention({ read: () => `1 ${waitNs} 1`, now: () => clock });
    clock = 100;
    waitNs = 5e6; // 5 ms of 100
    assert.equal(contended(), false);
    clock = 150;
    waitNs = 50e6;
    assert.equal(contended(), false, "renewed at most every 100 ms");
    clock = 200;
    assert.equal(contended(), true, "45 ms of 100 waiting");
    clock = 300;
    waitNs = 52e6;
    assert.equal(contended(), false);
  });

  it("cpuContention() is never true where the thread's schedstat cannot be read", () => {
    let clock = 0;
    const contended = cpuContention({
      read: () => {
        throw new Error("ENOENT");
      },
      now: () => clock,
    });
    clock = 1000;
    assert.equal(contended(), false);
  });

  it("parseRunQueueWaitNs() reads the kernel's own schedstat of this thread", {
    skip: process.platform !== "linux",
  }, () => {
    const wait = parseRunQueueWaitNs(readFileSync("/proc/thread-self/schedstat", "utf8"));
    assert.ok(wait !== undefined && wait >= 0, "the run-queue wait, ns");
  });
});
