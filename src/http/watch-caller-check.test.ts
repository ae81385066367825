import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { UserInfo } from "../registry/types.ts";
import { eventually } from "../utils/testing-eventually.ts";
import { type CallerChanges, watchCallerCheck } from "./watch-caller-check.ts";

const alice: UserInfo = { name: "alice", groups: ["devs"] };

/** Changes announced by hand; `same` compares names and groups. */
function changes(): CallerChanges & { announce(): void; listeners: number } {
  const listeners = new Set<() => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    same: (before, after) => before.name === after.name && before.groups.join() === after.groups.join(),
    announce: () => {
      for (const listener of listeners) listener();
    },
    get listeners() {
      return listeners.size;
    },
  };
}

describe("watchCallerCheck()", () => {
  it("watchCallerCheck() stops the watch once its caller resolves differently, and checks changes together once", async () => {
    const source = changes();
    let resolved: UserInfo = alice;
    let resolutions = 0;
    const guard = watchCallerCheck({
      changes: source,
      caller: alice,
      resolveAgain: async () => {
        resolutions++;
        return resolved;
      },
    });
    let stopped = 0;
    guard.start(() => {
      stopped++;
      guard.end();
    });
    source.announce();
    source.announce();
    source.announce();
    await eventually(async () => resolutions === 1, "one check for the start and three changes");
    assert.equal(stopped, 0, "the same caller keeps its watch");

    resolved = { name: "alice", groups: [] };
    source.announce();
    await eventually(async () => stopped === 1, "the watch stopped");
    assert.equal(source.listeners, 0, "ending unsubscribes");
  });

  it("watchCallerCheck() stops the watch when the caller no longer resolves (a revoked key, a lost right)", async () => {
    const source = changes();
    let stopped = false;
    const guard = watchCallerCheck({
      changes: source,
      caller: alice,
      resolveAgain: async () => {
        throw new Error("401");
      },
    });
    guard.start(() => {
      stopped = true;
    });
    source.announce();
    await eventually(async () => stopped, "the watch stopped");
    guard.end();
  });

  it("watchCallerCheck() checks once at its start, for a change made while the watch was being set up", async () => {
    const source = changes();
    let stopped = false;
    const guard = watchCallerCheck({
      changes: source,
      caller: alice,
      resolveAgain: async () => ({ name: "alice", groups: [] }),
    });
    guard.start(() => {
      stopped = true;
    });
    await eventually(async () => stopped, "the watch stopped without an announced change");
    guard.end();
  });

  it("watchCallerCheck() checks on its interval too, for what no change announces (an expiry)", async () => {
    const source = changes();
    let expired = false;
    let stopped = false;
    const guard = watchCallerCheck({
      changes: source,
      caller: alice,
      intervalMs: 5,
      resolveAgain: async () => {
        if (expired) throw new Error("401: expired");
        return alice;
      },
    });
    guard.start(() => {
      stopped = true;
    });
    expired = true;
    await eventually(async () => stopped, "the watch stopped without an announced change");
    guard.end();
  });

  it("watchCallerCheck() does nothing once ended, even for a check in flight", async () => {
    const source = changes();
    let release!: () => void;
    const pending = new Promise<void>((resolve) => {
      release = resolve;
    });
    let stopped = false;
    const guard = watchCallerCheck({
      changes: source,
      caller: alice,
      resolveAgain: async () => {
        await pending;
        throw new Error("401");
      },
    });
    guard.start(() => {
      stopped = true;
    });
    source.announce();
    await new Promise((resolve) => setImmediate(resolve));
    guard.end();
    release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stopped, false);
    assert.equal(source.listeners, 0);
  });
});
