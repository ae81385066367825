import assert from "node:assert/strict";
import { test } from "node:test";
import { LatestCache } from "./latest-cache.ts";
import { openSqliteStore } from "./sqlite-store.ts";

test("SqliteStore get() of a cached key sees every later update and delete at once", async () => {
  const store = await openSqliteStore({ path: ":memory:" });
  try {
    const created = await store.create("/k/a", "v1");
    assert.equal((await store.get("/k/a"))?.value, "v1", "the read caches the record");
    let revision = created.revision;
    for (let i = 2; i <= 4; i++) {
      revision = (await store.update("/k/a", `v${i}`, revision)).revision;
      const read = await store.get("/k/a");
      assert.equal(read?.value, `v${i}`);
      assert.equal(read?.revision, revision);
    }
    await store.delete("/k/a");
    assert.equal(await store.get("/k/a"), undefined);
    await store.create("/k/a", "again");
    assert.equal((await store.get("/k/a"))?.value, "again");
  } finally {
    await store.close();
  }
});

test("SqliteStore get() after a write rejected by its precondition still returns the committed record", async () => {
  const store = await openSqliteStore({ path: ":memory:" });
  try {
    const created = await store.create("/k/b", "one");
    await store.get("/k/b");
    await assert.rejects(store.update("/k/b", "stale", created.revision + 100));
    assert.equal((await store.get("/k/b"))?.value, "one");
  } finally {
    await store.close();
  }
});

test("LatestCache stays within its byte budget, dropping the oldest entries first", () => {
  const cache = new LatestCache(3 * (4 + 100 + 96));
  const record = (key: string) => ({ key, value: "x".repeat(100), revision: 1, createRevision: 1 });
  for (const key of ["/k/1", "/k/2", "/k/3", "/k/4"]) cache.remember(record(key));
  assert.equal(cache.size, 3);
  assert.equal(cache.get("/k/1"), undefined);
  assert.ok(cache.get("/k/4"));
  cache.updated(record("/k/9"));
  assert.equal(cache.get("/k/9"), undefined, "a write does not add keys nobody read");
});
