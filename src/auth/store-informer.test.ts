import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import type { StoredRecord, WatchEvent } from "../storage/types.ts";
import { StoreInformer } from "./store-informer.ts";

function recorder() {
  const state = new Map<string, string>();
  return {
    state,
    prefixes: ["/a/"],
    reset(records: StoredRecord[]) {
      state.clear();
      for (const r of records) state.set(r.key, r.value);
    },
    apply(event: WatchEvent) {
      if (event.type === "delete") state.delete(event.record.key);
      else state.set(event.record.key, event.record.value);
    },
  };
}

describe("StoreInformer", () => {
  it("start() loads the keys under its prefixes only", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    await storage.create("/a/1", "one");
    await storage.create("/b/1", "other");
    const handler = recorder();
    const informer = new StoreInformer(storage, handler);
    await informer.start();
    assert.deepEqual([...handler.state], [["/a/1", "one"]]);
    informer.stop();
    await storage.close();
  });

  it("fresh() resolves only once every committed write is applied", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const handler = recorder();
    const informer = new StoreInformer(storage, handler);
    await informer.start();
    for (let i = 0; i < 50; i++) {
      await storage.create(`/a/${i}`, String(i));
      await storage.create(`/b/${i}`, "x");
      await informer.fresh();
      assert.equal(handler.state.get(`/a/${i}`), String(i));
    }
    await storage.delete("/a/0");
    await informer.fresh();
    assert.equal(handler.state.has("/a/0"), false);
    informer.stop();
    await storage.close();
  });

  it("fresh() never hangs once the informer is stopped", async () => {
    const storage = await openSqliteStore({ path: ":memory:" });
    const informer = new StoreInformer(storage, recorder());
    await informer.start();
    informer.stop();
    await storage.create("/a/1", "x");
    await informer.fresh();
    await storage.close();
  });
});
