import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_PAGE_CACHE_BYTES, openDatabase } from "./schema.ts";

test("openDatabase() sizes SQLite's page cache in bytes (32 MiB unless told)", () => {
  const cacheSize = (pageCacheBytes?: number) => {
    const db = openDatabase(":memory:", "FULL", pageCacheBytes);
    try {
      return db.prepare("PRAGMA cache_size").get()?.cache_size;
    } finally {
      db.close();
    }
  };
  assert.equal(cacheSize(), -(DEFAULT_PAGE_CACHE_BYTES / 1024));
  assert.equal(cacheSize(8 * 1024 * 1024), -8192);
});
