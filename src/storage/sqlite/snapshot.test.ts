import assert from "node:assert/strict";
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, test } from "node:test";
import { StorageError } from "../types.ts";
import { inspectSnapshot, snapshotStoreFile } from "./snapshot.ts";
import { openSqliteStore } from "./sqlite-store.ts";

const dir = mkdtempSync(join(tmpdir(), "sqlite-snapshot-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = (name: string) => join(dir, `${name}-${++files}.db`);

/** Every log row of a database file, in revision order. */
function rows(file: string): unknown[] {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db.prepare("SELECT id, name, deleted, prev_revision, value FROM kv ORDER BY id").all();
  } finally {
    db.close();
  }
}

test("snapshot() writes the store as of one revision while writers keep committing", async () => {
  const path = fresh("live");
  const store = await openSqliteStore({ path });
  // Enough pages that the copy takes many steps, so writes land in the middle of it.
  await Promise.all(Array.from({ length: 10_000 }, (_, i) => store.create(`/k/seed-${i}`, "s".repeat(400))));
  let stop = false;
  let written = 0;
  const writers = Array.from({ length: 8 }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      const record = await store.create(`/k/w${w}-${i}`, `v${i}`);
      await store.update(record.key, `v${i}-b`, record.revision);
      if (i % 3 === 0) await store.delete(record.key);
      written++;
    }
  });
  const snapshots: { file: string; startedAt: number }[] = [];
  try {
    while (written < 50) await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 5; i++) {
      const file = fresh("snap");
      const startedAt = await store.currentRevision();
      await store.snapshot!(file);
      snapshots.push({ file, startedAt });
    }
  } finally {
    stop = true;
    await Promise.all(writers);
    await store.close();
  }
  assert.ok(written > 50);
  // Each snapshot is exactly the log's prefix up to the revision it names: nothing torn, nothing missing.
  const log = rows(path);
  let sawLaterWrites = false;
  for (const { file, startedAt } of snapshots) {
    const info = inspectSnapshot(file);
    if (info.revision > startedAt) sawLaterWrites = true;
    assert.ok(existsSync(file) && !existsSync(`${file}-wal`), "a snapshot is one self-contained file");
    assert.deepEqual(
      rows(file),
      log.filter((row) => Number((row as { id: number }).id) <= info.revision),
    );
    assert.ok(info.revision >= startedAt);
  }
  assert.ok(sawLaterWrites, "writes committed while a snapshot was copied are in it");
});

test("inspectSnapshot() says what a snapshot holds", async () => {
  const path = fresh("store");
  const store = await openSqliteStore({ path });
  const a = await store.create("/k/a", "a");
  await store.create("/k/b", "b");
  await store.delete("/k/b");
  await store.update("/k/a", "a2", a.revision);
  await store.compact(1);
  const file = fresh("snap");
  await store.snapshot!(file);
  await store.close();
  assert.deepEqual(inspectSnapshot(file), { revision: 4, compactedRevision: 3, keys: 1 });
});

test("snapshotStoreFile() snapshots a store no process serves, and refuses a missing one", async () => {
  const path = fresh("offline");
  const store = await openSqliteStore({ path });
  await store.create("/k/a", "a");
  await store.close();
  const file = fresh("snap");
  await snapshotStoreFile(path, file);
  assert.deepEqual(inspectSnapshot(file), { revision: 1, compactedRevision: 0, keys: 1 });
  await assert.rejects(snapshotStoreFile(join(dir, "none.db"), fresh("snap")), /there is no store at/);
});

test("inspectSnapshot() refuses a file that is no store snapshot or is damaged", async () => {
  const text = fresh("text");
  writeFileSync(text, "not a database at all ".repeat(300));
  assert.throws(
    () => inspectSnapshot(text),
    (error: unknown) =>
      error instanceof StorageError && error.storageCode === "Corrupt" && error.message.includes(text),
  );

  const other = fresh("other");
  const db = new DatabaseSync(other);
  db.exec("CREATE TABLE things (x)");
  db.close();
  assert.throws(() => inspectSnapshot(other), /not a store snapshot/);

  // A snapshot with a page overwritten in the middle of its log.
  const path = fresh("store");
  const store = await openSqliteStore({ path });
  await Promise.all(Array.from({ length: 2000 }, (_, i) => store.create(`/k/${i}`, "v".repeat(300))));
  const good = fresh("snap");
  await store.snapshot!(good);
  await store.close();
  const bad = fresh("bad");
  copyFileSync(good, bad);
  const handle = new DatabaseSync(bad);
  const pageSize = Number(handle.prepare("PRAGMA page_size").get()?.page_size);
  handle.close();
  const bytes = Buffer.alloc(pageSize, 0x5a);
  const fd = openSync(bad, "r+");
  writeSync(fd, bytes, 0, pageSize, pageSize * 20);
  closeSync(fd);
  assert.throws(
    () => inspectSnapshot(bad),
    (error: unknown) => error instanceof StorageError && error.storageCode === "Corrupt",
  );
});
