import assert from "node:assert/strict";
import { test } from "node:test";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { compactionTask } from "./compaction-task.ts";

test("compactionTask() compacts, each interval, to the revision it saw one interval earlier", async () => {
  const storage = await openSqliteStore({ path: ":memory:" });
  const task = compactionTask({ storage, intervalMs: 30 });
  try {
    await storage.create("/k/a", "v");
    await storage.create("/k/b", "v");
    task.start();
    // Writes keep coming; the first tick only remembers a revision, a later one compacts up to a remembered one.
    for (let i = 0; (await storage.compactedRevision()) === 0 && i < 200; i++) {
      await storage.create(`/k/${i}`, "v");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const compacted = await storage.compactedRevision();
    assert.ok(compacted >= 2, `compacted to ${compacted}`);
    assert.ok(compacted < (await storage.currentRevision()), "never up to the newest revision");
  } finally {
    task.stop();
    await storage.close();
  }
});
