import assert from "node:assert/strict";
import { test } from "node:test";
import { claimOneTimeJob, waitForOneTimeJob } from "./one-time-claim.ts";
import { openSqliteStore } from "./sqlite/sqlite-store.ts";

test("claimOneTimeJob() lets one of many claimants do the job and hands a stale claim over", async () => {
  const storage = await openSqliteStore({ path: ":memory:" });
  try {
    let now = 1_000_000;
    const claim = () => claimOneTimeJob({ storage, key: "/internal/job", now: () => now, staleMs: 60_000 });
    const results = await Promise.all(Array.from({ length: 5 }, claim));
    assert.equal(results.filter(Boolean).length, 1, "exactly one claimant wins");
    assert.equal(await claim(), false, "a fresh claim is kept");
    now += 61_000;
    const takeovers = await Promise.all([claim(), claim()]);
    assert.equal(takeovers.filter(Boolean).length, 1, "one claimant takes a stale claim over");
  } finally {
    await storage.close();
  }
});

test("waitForOneTimeJob() resolves with the job's result, or fails naming the job", async () => {
  let calls = 0;
  assert.equal(await waitForOneTimeJob("the job", async () => (++calls >= 3 ? "done" : undefined)), "done");
  await assert.rejects(
    waitForOneTimeJob("the first key", async () => undefined, 300),
    /the first key was claimed/,
  );
});
