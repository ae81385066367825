import assert from "node:assert/strict";
import { test } from "node:test";
import { RetentionCompaction } from "../storage/retention-compaction.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { eventually } from "../utils/testing-eventually.ts";
import { compactionTask } from "./compaction-task.ts";

test("compactionTask() compacts, each interval, to the newest revision older than the retention", async () => {
  const storage = await openSqliteStore({ path: ":memory:" });
  const runs: number[] = [];
  const task = compactionTask({
    storage,
    intervalMs: 30,
    retentionMs: 60,
    onCompacted: (run) => runs.push(run.revision),
  });
  try {
    await storage.create("/k/a", "v");
    await storage.create("/k/b", "v");
    task.start();
    // Writes keep coming; nothing is compacted until a sampled revision is a retention old.
    let written = 0;
    await eventually(async () => {
      if ((await storage.compactedRevision()) > 0) return true;
      await storage.create(`/k/${written++}`, "v");
      return false;
    }, "a compaction");
    task.stop();
    // A tick under way finishes, and reports its run.
    await eventually(async () => runs.at(-1) === (await storage.compactedRevision()), "the last run reported");
    const compacted = await storage.compactedRevision();
    assert.ok(compacted >= 2, `compacted to ${compacted}`);
    assert.ok(compacted < (await storage.currentRevision()), "never up to the newest revision");
    assert.equal(runs.at(-1), compacted, "onCompacted hears of each run");
  } finally {
    task.stop();
    await storage.close();
  }
});

test("RetentionCompaction.tick() keeps exactly the retention readable, and asks for its turn first", async () => {
  const storage = await openSqliteStore({ path: ":memory:" });
  let now = 0;
  const turns: number[] = [];
  let myTurn = false;
  const compaction = new RetentionCompaction({
    storage,
    retentionMs: 100,
    now: () => now,
    takeTurn: async (target) => {
      turns.push(target);
      return myTurn;
    },
  });
  try {
    for (let i = 0; i < 3; i++) await storage.create(`/k/${i}`, "v"); // revisions 1-3
    assert.equal(await compaction.tick(), undefined, "t=0 samples revision 3; nothing is old enough");
    now = 60;
    await storage.create("/k/3", "v"); // 4
    assert.equal(await compaction.tick(), undefined, "t=60 samples 4");
    now = 120;
    await storage.create("/k/4", "v"); // 5
    assert.equal(await compaction.tick(), undefined, "t=120: revision 3 is due, but the turn is another replica's");
    assert.deepEqual(turns, [3]);
    myTurn = true;
    now = 170;
    const run = await compaction.tick();
    assert.equal(run?.revision, 4, "t=170: the newest sample at least 100 old is t=60's revision 4");
    assert.deepEqual(turns, [3, 4]);
    assert.equal(await storage.compactedRevision(), 4);
    assert.equal(await compaction.tick(), undefined, "nothing new is due");
  } finally {
    await storage.close();
  }
});
