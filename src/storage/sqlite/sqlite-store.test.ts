import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, test } from "node:test";
import { describeStoreConformance } from "../conformance.ts";
import { WatchRecording } from "../conformance-support.ts";
import type { StorageError } from "../types.ts";
import { openSqliteStore } from "./sqlite-store.ts";

const dir = mkdtempSync(join(tmpdir(), "sqlite-store-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `store-${++files}.db`);

describeStoreConformance("SqliteStore(:memory:)", () => openSqliteStore({ path: ":memory:", watchBufferLimit: 1000 }));
describeStoreConformance("SqliteStore(file)", () => openSqliteStore({ path: freshPath() }));
describeStoreConformance("SqliteStore(file, fsync on the thread pool)", () =>
  openSqliteStore({ path: freshPath(), fsync: "thread-pool" }),
);

/** The log rows (id, name, deleted) of a closed store's file. */
function logRows(path: string): [number, string, number][] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare("SELECT id, name, deleted FROM kv ORDER BY id").all();
    return rows.map((r) => [Number(r.id), String(r.name), Number(r.deleted)]);
  } finally {
    db.close();
  }
}

test("SqliteStore reopened from its file keeps records, revisions, history and the compacted revision", async () => {
  const path = freshPath();
  const first = await openSqliteStore({ path, synchronous: "NORMAL" });
  const a = await first.create("/k/a", "a1");
  const a2 = await first.update("/k/a", "a2", a.revision);
  const b = await first.create("/k/b", "b1");
  await first.compact(2);
  await first.close();

  const store = await openSqliteStore({ path });
  try {
    assert.equal(await store.currentRevision(), 3);
    assert.equal(await store.compactedRevision(), 1);
    assert.deepEqual((await store.list({ prefix: "/k/" })).records, [a2, b]);
    const replay = new WatchRecording(store, { prefix: "/k/", afterRevision: 1 });
    await replay.untilRevision(3);
    assert.deepEqual(replay.events, [
      { type: "update", record: a2, previous: a },
      { type: "create", record: b },
    ]);
  } finally {
    await store.close();
  }
});

test("SqliteStore continues revisions after compaction removed the newest row", async () => {
  const path = freshPath();
  const first = await openSqliteStore({ path });
  await first.create("/k/a", "v");
  await first.delete("/k/a");
  assert.equal(await first.compact(0), 2);
  await first.close();
  assert.deepEqual(logRows(path), [], "the tombstone and what it deleted are gone");

  const store = await openSqliteStore({ path });
  try {
    assert.equal(await store.currentRevision(), 2);
    assert.equal((await store.create("/k/a", "again")).revision, 3);
  } finally {
    await store.close();
  }
});

test("openSqliteStore() fails while another store holds the same file", async () => {
  const path = freshPath();
  const owner = await openSqliteStore({ path });
  await assert.rejects(openSqliteStore({ path }), /locked by another process/);
  await owner.close();
  const next = await openSqliteStore({ path });
  await next.close();
});

test("SqliteStore.compact() deletes superseded rows and old tombstones, and keeps what is still readable", async () => {
  const path = freshPath();
  const store = await openSqliteStore({ path });
  const a = await store.create("/k/a", "a1"); // 1
  await store.create("/k/b", "b1"); // 2
  await store.update("/k/a", "a2", a.revision); // 3 supersedes 1
  await store.delete("/k/b"); // 4 tombstone, supersedes 2
  await store.create("/k/c", "c1"); // 5
  await store.update("/k/c", "c2", 5); // 6 supersedes 5, after the compacted revision
  await store.compact(2); // compacts to 4
  await store.close();
  assert.deepEqual(logRows(path), [
    [3, "/k/a", 0],
    [5, "/k/c", 0],
    [6, "/k/c", 0],
  ]);
});

test("SqliteStore finishes a cleanup interrupted by a crash on its next compaction", async () => {
  const path = freshPath();
  const first = await openSqliteStore({ path });
  const a = await first.create("/k/a", "a1");
  await first.update("/k/a", "a2", a.revision);
  await first.close();
  // What a crash between recording the compacted revision and deleting rows leaves behind.
  const db = new DatabaseSync(path);
  db.exec("INSERT INTO meta (name, value) VALUES ('compacted_revision', 2)");
  db.close();

  const store = await openSqliteStore({ path });
  assert.equal(await store.compactedRevision(), 2);
  assert.equal(await store.compact(10), 2);
  await store.close();
  assert.deepEqual(logRows(path), [[2, "/k/a", 0]]);
});

test("SqliteStore with autoCompact compacts in the background", async () => {
  const store = await openSqliteStore({ path: ":memory:", autoCompact: { intervalMs: 1, keepRevisions: 1 } });
  try {
    for (let i = 0; i < 5; i++) await store.create(`/k/${i}`, "v");
    while ((await store.compactedRevision()) < 4) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(await store.compactedRevision(), 4);
  } finally {
    await store.close();
  }
});

test("SqliteStore commits the writes of one turn together: watchers get them as one batch", async () => {
  const store = await openSqliteStore({ path: freshPath() });
  try {
    const recording = new WatchRecording(store, { prefix: "/k/", afterRevision: 0 });
    await Promise.all(Array.from({ length: 100 }, (_, i) => store.create(`/k/${i}`, "v")));
    await recording.untilRevision(100);
    assert.deepEqual(
      recording.batches.map((batch) => batch.length),
      [100],
    );
  } finally {
    await store.close();
  }
});

test("SqliteStore updateChain() appends consecutive versions as one compare-and-swap", async () => {
  const store = await openSqliteStore({ path: ":memory:" });
  try {
    const updateChain = store.updateChain?.bind(store);
    assert.ok(updateChain, "the SQLite store offers chained updates");
    const created = await store.create("/k/x", "v1");
    const stale = await Promise.allSettled([updateChain("/k/x", ["no"], created.revision + 5)]);
    assert.equal(stale[0].status, "rejected");
    assert.equal(((stale[0] as PromiseRejectedResult).reason as { storageCode?: string }).storageCode, "Conflict");
    const records = await updateChain("/k/x", ["v2", "v3"], created.revision);
    assert.deepEqual(
      records.map((r) => [r.value, r.revision]),
      [
        ["v2", created.revision + 1],
        ["v3", created.revision + 2],
      ],
    );
    assert.equal((await store.get("/k/x"))?.value, "v3");
    const history = new WatchRecording(store, { prefix: "/k/", afterRevision: created.revision });
    await history.untilRevision(created.revision + 2);
    history.watcher.close();
    assert.deepEqual(
      history.events.map((e) => [e.type, e.record.value, e.previous?.value]),
      [
        ["update", "v2", "v1"],
        ["update", "v3", "v2"],
      ],
    );
  } finally {
    await store.close();
  }
});

test("SqliteStore with fsync on the thread pool acknowledges a write once the WAL fsync ends; watchers see it at COMMIT", async () => {
  const fsyncs: PromiseWithResolvers<void>[] = [];
  const syncWal = () => {
    fsyncs.push(Promise.withResolvers<void>());
    return fsyncs[fsyncs.length - 1].promise;
  };
  const store = await openSqliteStore({ path: freshPath(), fsync: "thread-pool", syncWal });
  try {
    const watched = new WatchRecording(store, { prefix: "/k/", afterRevision: 0 });
    let acknowledged = false;
    const write = store.create("/k/a", "v").then((record) => {
      acknowledged = true;
      return record;
    });
    await watched.untilRevision(1);
    assert.equal((await store.get("/k/a"))?.value, "v", "readable from its COMMIT on");
    assert.equal(acknowledged, false, "not acknowledged before the fsync");
    assert.equal(fsyncs.length, 1);
    fsyncs[0].resolve();
    assert.equal((await write).revision, 1);
    watched.watcher.close();
  } finally {
    const closing = store.close();
    for (const fsync of fsyncs) fsync.resolve();
    await closing;
  }
});

test("SqliteStore with fsync on the thread pool: a failed fsync fails its writes as Unavailable and refuses later ones", async () => {
  const path = freshPath();
  const store = await openSqliteStore({
    path,
    fsync: "thread-pool",
    syncWal: () => Promise.reject(new Error("EIO: i/o error, fdatasync")),
  });
  try {
    await assert.rejects(store.create("/k/a", "v"), (error: StorageError) => {
      assert.equal(error.storageCode, "Unavailable");
      assert.match(error.message, /cannot make writes durable .*EIO.*restart the server/);
      return true;
    });
    await assert.rejects(store.create("/k/b", "v"), /cannot make writes durable/);
    assert.equal(await store.currentRevision(), 1, "the refused write was not committed");
  } finally {
    await store.close();
  }
  assert.deepEqual(logRows(path), [[1, "/k/a", 0]]);
});
