// Conformance: create, update, delete, get, revisions, concurrency and close.

import assert from "node:assert/strict";
import { test } from "node:test";
import { type OpenStore, storageError, WatchRecording, withStore } from "./conformance-support.ts";

export function writeConformance(name: string, open: OpenStore): void {
  test(`${name} starts empty at revision 0`, () =>
    withStore(open, async (store) => {
      assert.equal(await store.currentRevision(), 0);
      assert.equal(await store.compactedRevision(), 0);
      assert.equal(await store.get("/a/x"), undefined);
      assert.deepEqual(await store.list({ prefix: "/" }), { records: [], revision: 0, remaining: 0 });
      assert.equal(await store.count("/"), 0);
    }));

  test(`${name}.create() stores the value at a new revision that is also its createRevision`, () =>
    withStore(open, async (store) => {
      const record = await store.create("/a/x", '{"v":1}');
      assert.deepEqual(record, { key: "/a/x", value: '{"v":1}', revision: 1, createRevision: 1 });
      assert.deepEqual(await store.get("/a/x"), record);
      assert.equal(await store.currentRevision(), 1);
    }));

  test(`${name}.revisionNow(), where a backend offers it, is currentRevision() without waiting`, () =>
    withStore(open, async (store) => {
      if (!store.revisionNow) return;
      assert.equal(store.revisionNow(), 0);
      const first = await store.create("/a/x", "{}");
      assert.equal(store.revisionNow(), first.revision);
      await assert.rejects(store.create("/a/x", "{}"));
      assert.equal(store.revisionNow(), await store.currentRevision(), "a failed write takes no revision");
    }));

  test(`${name}.create() fails with KeyExists on a live key and reports the current record`, () =>
    withStore(open, async (store) => {
      const first = await store.create("/a/x", "one");
      const error = await storageError(store.create("/a/x", "two"), "KeyExists");
      assert.deepEqual(error.current, first);
      assert.equal((await store.get("/a/x"))?.value, "one");
      assert.equal(await store.currentRevision(), first.revision, "a failed write takes no revision");
    }));

  test(`${name}.update() replaces the value and keeps createRevision`, () =>
    withStore(open, async (store) => {
      const created = await store.create("/a/x", "one");
      await store.create("/a/y", "other");
      const updated = await store.update("/a/x", "two", created.revision);
      assert.deepEqual(updated, { key: "/a/x", value: "two", revision: 3, createRevision: created.revision });
      assert.deepEqual(await store.get("/a/x"), updated);
    }));

  test(`${name}.update() fails with Conflict on a stale revision`, () =>
    withStore(open, async (store) => {
      const created = await store.create("/a/x", "one");
      const updated = await store.update("/a/x", "two", created.revision);
      const error = await storageError(store.update("/a/x", "three", created.revision), "Conflict");
      assert.deepEqual(error.current, updated);
      assert.equal((await store.get("/a/x"))?.value, "two");
    }));

  test(`${name}.update() fails with NotFound for a missing or deleted key`, () =>
    withStore(open, async (store) => {
      await storageError(store.update("/a/missing", "v", 1), "NotFound");
      const created = await store.create("/a/x", "one");
      await store.delete("/a/x");
      await storageError(store.update("/a/x", "two", created.revision), "NotFound");
    }));

  test(`${name}.delete() without an expected revision returns the last value at the delete's revision`, () =>
    withStore(open, async (store) => {
      const created = await store.create("/a/x", "one");
      const deleted = await store.delete("/a/x");
      assert.deepEqual(deleted, { key: "/a/x", value: "one", revision: 2, createRevision: created.revision });
      assert.equal(await store.get("/a/x"), undefined);
      assert.equal(await store.currentRevision(), 2);
    }));

  test(`${name}.delete() with the current revision succeeds and with a stale one fails with Conflict`, () =>
    withStore(open, async (store) => {
      const created = await store.create("/a/x", "one");
      const updated = await store.update("/a/x", "two", created.revision);
      const error = await storageError(store.delete("/a/x", created.revision), "Conflict");
      assert.deepEqual(error.current, updated);
      assert.deepEqual(await store.get("/a/x"), updated);
      const deleted = await store.delete("/a/x", updated.revision);
      assert.equal(deleted.value, "two");
      assert.equal(await store.get("/a/x"), undefined);
    }));

  test(`${name}.delete() fails with NotFound for a missing or already deleted key`, () =>
    withStore(open, async (store) => {
      await storageError(store.delete("/a/missing"), "NotFound");
      await store.create("/a/x", "one");
      await store.delete("/a/x");
      await storageError(store.delete("/a/x"), "NotFound");
    }));

  test(`${name}.create() after delete starts a new life with a new createRevision`, () =>
    withStore(open, async (store) => {
      const first = await store.create("/a/x", "one");
      await store.delete("/a/x");
      const second = await store.create("/a/x", "again");
      assert.equal(second.createRevision, second.revision);
      assert.ok(second.createRevision > first.createRevision);
      assert.deepEqual(await store.get("/a/x"), second);
    }));

  test(`${name} revisions increase by one per successful write, never for a failed one`, () =>
    withStore(open, async (store) => {
      const seen: number[] = [];
      const a = await store.create("/a/1", "v");
      seen.push(a.revision);
      await storageError(store.create("/a/1", "v"), "KeyExists");
      seen.push((await store.update("/a/1", "w", a.revision)).revision);
      await storageError(store.update("/a/1", "x", a.revision), "Conflict");
      seen.push((await store.create("/b/1", "v")).revision);
      seen.push((await store.delete("/a/1")).revision);
      await storageError(store.delete("/a/1"), "NotFound");
      assert.deepEqual(seen, [1, 2, 3, 4]);
      assert.equal(await store.currentRevision(), 4);
    }));

  test(`${name}.create() of one key by concurrent callers lets exactly one win`, () =>
    withStore(open, async (store) => {
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.create("/a/x", `v${i}`)));
      const won = results.filter((r) => r.status === "fulfilled");
      assert.equal(won.length, 1);
      for (const r of results) {
        if (r.status === "rejected") assert.equal(r.reason.storageCode, "KeyExists");
      }
      assert.equal((await store.get("/a/x"))?.value, won[0].value.value);
      assert.equal(await store.currentRevision(), 1);
    }));

  test(`${name}.update() by concurrent callers with the same expected revision lets exactly one win`, () =>
    withStore(open, async (store) => {
      const created = await store.create("/a/x", "v");
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.update("/a/x", `u${i}`, created.revision)),
      );
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      for (const r of results) {
        if (r.status === "rejected") assert.equal(r.reason.storageCode, "Conflict");
      }
    }));

  test(`${name} writes issued together each succeed or fail on their own`, () =>
    withStore(open, async (store) => {
      await store.create("/a/taken", "v");
      const results = await Promise.allSettled([
        store.create("/a/1", "v"),
        store.create("/a/taken", "v"),
        store.update("/a/missing", "v", 1),
        store.create("/a/2", "v"),
        store.delete("/a/nothing"),
        store.create("/a/3", "v"),
      ]);
      assert.deepEqual(
        results.map((r) => (r.status === "fulfilled" ? "ok" : r.reason.storageCode)),
        ["ok", "KeyExists", "NotFound", "ok", "NotFound", "ok"],
      );
      const revisions = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.revision] : []));
      assert.deepEqual(
        [...revisions].sort((a, b) => a - b),
        [2, 3, 4],
      );
      assert.equal(await store.count("/a/"), 4);
    }));

  test(`${name}.close() ends watches with "closed" and later calls fail with Closed`, async () => {
    const store = await open();
    await store.create("/a/x", "v");
    const recording = new WatchRecording(store, { prefix: "/", afterRevision: 0 });
    const pending = store.create("/a/y", "v");
    await store.close();
    assert.equal((await pending).key, "/a/y", "a write accepted before close still commits");
    assert.deepEqual(await recording.untilClosed(), { kind: "closed" });
    await storageError(store.get("/a/x"), "Closed");
    await storageError(store.list({ prefix: "/" }), "Closed");
    await storageError(store.count("/"), "Closed");
    await storageError(store.create("/a/z", "v"), "Closed");
    await storageError(store.update("/a/x", "v", 1), "Closed");
    await storageError(store.delete("/a/x"), "Closed");
    await storageError(store.compact(0), "Closed");
    await storageError(store.currentRevision(), "Closed");
    await storageError(store.compactedRevision(), "Closed");
    const late = new WatchRecording(store, { prefix: "/", afterRevision: 0 });
    assert.deepEqual(await late.untilClosed(), { kind: "closed" });
    await store.close();
    assert.equal(recording.closes.length, 1, "onClose is called exactly once");
  });
}
