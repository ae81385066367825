import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { StorageError } from "../types.ts";
import { installSnapshot, StoreNotEmptyError } from "./install-snapshot.ts";
import { openSqliteStore } from "./sqlite-store.ts";

const dir = mkdtempSync(join(tmpdir(), "sqlite-install-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = (name: string) => join(dir, `${name}-${++files}.db`);

/** A snapshot file holding the given keys. */
async function snapshotOf(keys: string[]): Promise<string> {
  const store = await openSqliteStore({ path: ":memory:" });
  for (const key of keys) await store.create(key, `value of ${key}`);
  const file = fresh("snap");
  await store.snapshot!(file);
  await store.close();
  return file;
}

test("installSnapshot() puts a snapshot in place of a missing store", async () => {
  const file = await snapshotOf(["/k/a", "/k/b"]);
  const path = fresh("target");
  assert.deepEqual(installSnapshot({ file, path, force: false }), { revision: 0, keys: 0 });
  assert.equal(existsSync(file), false, "the snapshot was moved");
  const store = await openSqliteStore({ path });
  assert.equal((await store.get("/k/b"))?.value, "value of /k/b");
  assert.equal(await store.currentRevision(), 2);
  await store.close();
});

test("installSnapshot() refuses a store that holds keys unless forced, and then replaces all of it", async () => {
  const path = fresh("target");
  const old = await openSqliteStore({ path });
  for (let i = 0; i < 50; i++) await old.create(`/old/${i}`, "old");
  await old.close();

  const file = await snapshotOf(["/k/new"]);
  assert.throws(
    () => installSnapshot({ file, path, force: false }),
    (error: unknown) =>
      error instanceof StoreNotEmptyError && error.message === `${path} already holds a store (50 keys at revision 50)`,
  );
  assert.ok(existsSync(file), "a refused install changes nothing");

  assert.deepEqual(installSnapshot({ file, path, force: true }), { revision: 50, keys: 50 });
  assert.equal(existsSync(`${path}-wal`), false, "no WAL of the old store is left beside the new file");
  const store = await openSqliteStore({ path });
  assert.deepEqual(
    (await store.list({ prefix: "/" })).records.map((record) => record.key),
    ["/k/new"],
  );
  await store.close();
});

test("installSnapshot() refuses a store a running process holds", async () => {
  const path = fresh("busy");
  const running = await openSqliteStore({ path });
  try {
    const file = await snapshotOf(["/k/a"]);
    assert.throws(() => installSnapshot({ file, path, force: true }), /locked by another process/);
    assert.ok(existsSync(file));
    await running.create("/k/still-mine", "v");
  } finally {
    await running.close();
  }
  assert.equal(statSync(path).isFile(), true);
});

test("installSnapshot() replaces a damaged store only when forced, with its companion files", async () => {
  const path = fresh("damaged");
  writeFileSync(path, "garbage where a database was ".repeat(100));
  writeFileSync(`${path}-wal`, "a write-ahead log of the damaged file");
  const file = await snapshotOf(["/k/a"]);
  assert.throws(
    () => installSnapshot({ file, path, force: false }),
    (error: unknown) => error instanceof StorageError && error.storageCode === "Corrupt",
  );
  assert.deepEqual(installSnapshot({ file, path, force: true }), { revision: 0, keys: 0, damaged: true });
  assert.equal(existsSync(`${path}-wal`), false);
  const store = await openSqliteStore({ path });
  assert.equal((await store.get("/k/a"))?.value, "value of /k/a");
  await store.close();
});
