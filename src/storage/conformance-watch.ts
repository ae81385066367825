// Conformance: watch from now and from the past, prefix filtering, ordering, the history/live boundary,
// backpressure, slow watchers, and close reasons.

import assert from "node:assert/strict";
import { test } from "node:test";
import { type OpenStore, turns, WatchRecording, withStore } from "./conformance-support.ts";
import type { KeyValueStore } from "./types.ts";

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Writes a sentinel under `prefix` and waits for it, so "nothing else arrived" can be asserted without a clock. */
async function settle(store: KeyValueStore, recording: WatchRecording, key: string): Promise<number> {
  const sentinel = await store.create(key, "sentinel");
  await recording.untilRevision(sentinel.revision);
  return sentinel.revision;
}

export function watchConformance(name: string, open: OpenStore): void {
  test(`${name}.watch() from 0 delivers only later writes, typed, with previous versions`, () =>
    withStore(open, async (store) => {
      const before = await store.create("/w/old", "old");
      const recording = new WatchRecording(store, { prefix: "/w/", afterRevision: 0 });
      const created = await store.create("/w/x", "one");
      const updated = await store.update("/w/x", "two", created.revision);
      const oldGone = await store.delete("/w/old", before.revision);
      await recording.untilRevision(oldGone.revision);
      assert.deepEqual(recording.events, [
        { type: "create", record: created },
        { type: "update", record: updated, previous: created },
        { type: "delete", record: oldGone, previous: before },
      ]);
      assert.equal(oldGone.value, "old");
    }));

  test(`${name}.watch() from a past revision replays history then continues live`, () =>
    withStore(open, async (store) => {
      const a = await store.create("/w/a", "a1");
      const a2 = await store.update("/w/a", "a2", a.revision);
      const gone = await store.delete("/w/a");
      const recording = new WatchRecording(store, { prefix: "/w/", afterRevision: a.revision });
      const b = await store.create("/w/b", "b1");
      await recording.untilRevision(b.revision);
      assert.deepEqual(recording.events, [
        { type: "update", record: a2, previous: a },
        { type: "delete", record: gone, previous: a2 },
        { type: "create", record: b },
      ]);
    }));

  test(`${name}.watch() filters by prefix (/a/ does not see /ab/)`, () =>
    withStore(open, async (store) => {
      const recording = new WatchRecording(store, { prefix: "/a/", afterRevision: 0 });
      await store.create("/ab/1", "v");
      await store.create("/a", "v");
      const mine = await store.create("/a/1", "v");
      await store.create("/b/1", "v");
      const end = await settle(store, recording, "/a/zz");
      assert.deepEqual(recording.revisions, [mine.revision, end]);
      const replay = new WatchRecording(store, { prefix: "/a/", afterRevision: 1 });
      await replay.untilRevision(end);
      assert.deepEqual(replay.revisions, [mine.revision, end]);
    }));

  test(`${name}.watch() delivers concurrent writes in strict revision order without gaps`, () =>
    withStore(open, async (store) => {
      const recording = new WatchRecording(store, { prefix: "/w/", afterRevision: 0 });
      const writers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 25; i++) {
          const created = await store.create(`/w/${w}/${i}`, "v");
          if (i % 3 === 0) await store.update(created.key, "u", created.revision);
        }
      });
      await Promise.all(writers);
      const last = await store.currentRevision();
      await recording.untilRevision(last);
      assert.deepEqual(recording.revisions, range(1, last));
    }));

  test(`${name}.watch() has no gap or duplicate at the history/live boundary`, () =>
    withStore(open, async (store) => {
      for (let i = 0; i < 30; i++) await store.create(`/w/${i}`, "v");
      const recordings: { start: number; recording: WatchRecording }[] = [];
      const writes: Promise<unknown>[] = [];
      // Watches start at many past revisions while writes are queued in the same turn and land in later ones.
      for (let start = 1; start <= 30; start += 2) {
        writes.push(store.create(`/w/live-${start}`, "v"));
        recordings.push({ start, recording: new WatchRecording(store, { prefix: "/w/", afterRevision: start }) });
        if (start % 5 === 0) await turns(1);
      }
      for (let i = 0; i < 10; i++) writes.push(store.create(`/w/late-${i}`, "v"));
      await Promise.all(writes);
      const last = await store.currentRevision();
      for (const { start, recording } of recordings) {
        await recording.untilRevision(last);
        assert.deepEqual(recording.revisions, range(start + 1, last), `watch from ${start}`);
      }
    }));

  test(`${name}.watch() far behind pages through history while writers keep going`, () =>
    withStore(open, async (store) => {
      await Promise.all(Array.from({ length: 2500 }, (_, i) => store.create(`/w/${i}`, "v")));
      const recording = new WatchRecording(store, { prefix: "/w/", afterRevision: 1 });
      const writes: Promise<unknown>[] = [];
      for (let round = 0; round < 10; round++) {
        for (let i = 0; i < 50; i++) writes.push(store.create(`/w/r${round}-${i}`, "v"));
        await turns(1);
      }
      await Promise.all(writes);
      const last = await store.currentRevision();
      await recording.untilRevision(last);
      assert.deepEqual(recording.revisions, range(2, last));
    }));

  test(`${name}.watch() pauses when onEvents returns false and resumes in order`, () =>
    withStore(open, async (store) => {
      const recording = new WatchRecording(store, { prefix: "/w/", afterRevision: 0, pauseAfter: 1 });
      await store.create("/w/1", "v");
      await recording.untilRevision(1);
      for (let i = 2; i <= 10; i++) await store.create(`/w/${i}`, "v");
      await turns();
      assert.deepEqual(recording.revisions, [1], "nothing is delivered while paused");
      recording.resume();
      await recording.untilRevision(10);
      assert.deepEqual(recording.revisions, range(1, 10));
      assert.deepEqual(recording.closes, []);
    }));

  test(`${name}.watch() cuts off a slow watcher with "slow" while writers proceed`, () =>
    withStore(open, async (store) => {
      const slow = new WatchRecording(store, { prefix: "/w/", afterRevision: 0, pauseAfter: 1 });
      const healthy = new WatchRecording(store, { prefix: "/w/", afterRevision: 0 });
      let written = 0;
      // The buffer limit is the backend's; keep writing (bounded) until the paused watcher is cut off.
      while (slow.closes.length === 0 && written < 50_000) {
        await Promise.all(Array.from({ length: 500 }, () => store.create(`/w/${written++}`, "v")));
        await turns(1);
      }
      assert.deepEqual(slow.closes, [{ kind: "slow" }], "the paused watcher was cut off");
      assert.equal(await store.count("/w/"), written, "every write succeeded");
      await healthy.untilRevision(written);
      assert.deepEqual(healthy.revisions, range(1, written));
      assert.deepEqual(healthy.closes, []);
      slow.resume();
      await settle(store, healthy, "/w/end");
      assert.equal(slow.closes.length, 1);
    }));

  test(`${name}.watch() from before the compacted revision closes with "compacted", asynchronously`, () =>
    withStore(open, async (store) => {
      for (let i = 0; i < 5; i++) await store.create(`/w/${i}`, "v");
      await store.compact(1);
      const recording = new WatchRecording(store, { prefix: "/w/", afterRevision: 2 });
      assert.deepEqual(recording.closes, [], "onClose is not called from inside watch()");
      assert.deepEqual(await recording.untilClosed(), {
        kind: "compacted",
        compactedRevision: 4,
        requestedRevision: 2,
      });
      assert.deepEqual(recording.events, []);
      const justBefore = new WatchRecording(store, { prefix: "/w/", afterRevision: 3 });
      assert.deepEqual(await justBefore.untilClosed(), {
        kind: "compacted",
        compactedRevision: 4,
        requestedRevision: 3,
      });
      const atCompacted = new WatchRecording(store, { prefix: "/w/", afterRevision: 4 });
      await atCompacted.untilRevision(5);
      assert.deepEqual(atCompacted.revisions, [5]);
    }));

  test(`${name}.watch() closed by the consumer reports "closed" once and delivers nothing more`, () =>
    withStore(open, async (store) => {
      const recording = new WatchRecording(store, { prefix: "/w/", afterRevision: 0 });
      const observer = new WatchRecording(store, { prefix: "/w/", afterRevision: 0 });
      await store.create("/w/1", "v");
      await recording.untilRevision(1);
      recording.watcher.close();
      recording.watcher.close();
      await store.create("/w/2", "v");
      await settle(store, observer, "/w/3");
      assert.deepEqual(recording.revisions, [1]);
      assert.deepEqual(recording.closes, [{ kind: "closed" }]);
    }));

  test(`${name}.watch() from a future revision starts after it`, () =>
    withStore(open, async (store) => {
      await store.create("/w/0", "v");
      const recording = new WatchRecording(store, { prefix: "/w/", afterRevision: 3 });
      for (let i = 1; i <= 4; i++) await store.create(`/w/${i}`, "v");
      await recording.untilRevision(5);
      assert.deepEqual(recording.revisions, [4, 5]);
    }));
}
