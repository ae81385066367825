// Conformance: list (prefixes, order, paging, revisions), count, and compaction.

import assert from "node:assert/strict";
import { test } from "node:test";
import { type OpenStore, storageError, withStore } from "./conformance-support.ts";
import type { KeyValueStore } from "./types.ts";

const keysOf = async (store: KeyValueStore, prefix: string, revision?: number) =>
  (await store.list({ prefix, revision })).records.map((r) => r.key);

export function readConformance(name: string, open: OpenStore): void {
  test(`${name}.list() keeps /a/ and /ab/ apart`, () =>
    withStore(open, async (store) => {
      for (const key of ["/a/1", "/ab/1", "/a/2", "/a", "/ab/2", "/b/1"]) await store.create(key, key);
      assert.deepEqual(await keysOf(store, "/a/"), ["/a/1", "/a/2"]);
      assert.deepEqual(await keysOf(store, "/ab/"), ["/ab/1", "/ab/2"]);
      assert.deepEqual(await keysOf(store, "/a"), ["/a", "/a/1", "/a/2", "/ab/1", "/ab/2"]);
      assert.equal(await store.count("/a/"), 2);
      assert.equal(await store.count("/"), 6);
    }));

  test(`${name}.list() returns keys in bytewise (UTF-8) order with their values and revisions`, () =>
    withStore(open, async (store) => {
      // UTF-16 order would put the emoji (a surrogate pair) before U+FFFD; UTF-8 byte order puts it last.
      const keys = ["/p/\u{1F600}", "/p/\uFFFD", "/p/é", "/p/z", "/p/A"];
      for (const key of keys) await store.create(key, `value of ${key}`);
      const page = await store.list({ prefix: "/p/" });
      assert.deepEqual(
        page.records.map((r) => r.key),
        ["/p/A", "/p/z", "/p/é", "/p/\uFFFD", "/p/\u{1F600}"],
      );
      for (const record of page.records) {
        assert.equal(record.value, `value of ${record.key}`);
        assert.equal(record.revision, keys.indexOf(record.key) + 1);
        assert.equal(record.createRevision, record.revision);
      }
      assert.equal(page.revision, 5);
      assert.equal(page.remaining, 0);
    }));

  test(`${name}.list() shows the newest version of each key and skips deleted keys`, () =>
    withStore(open, async (store) => {
      const a = await store.create("/k/a", "a1");
      await store.create("/k/b", "b1");
      const a2 = await store.update("/k/a", "a2", a.revision);
      await store.delete("/k/b");
      const page = await store.list({ prefix: "/k/" });
      assert.deepEqual(page.records, [a2]);
      assert.equal(page.revision, await store.currentRevision());
      assert.equal(await store.count("/k/"), 1);
    }));

  test(`${name}.list() pages with startAfter and limit, reporting what remains`, () =>
    withStore(open, async (store) => {
      const keys = Array.from({ length: 23 }, (_, i) => `/p/${String(i).padStart(2, "0")}`);
      await Promise.all(keys.map((key) => store.create(key, "v")));
      await store.create("/q/after", "v");
      await store.delete("/p/05");
      const live = keys.filter((key) => key !== "/p/05");
      const seen: string[] = [];
      let startAfter: string | undefined;
      let revision: number | undefined;
      for (;;) {
        const page = await store.list({ prefix: "/p/", limit: 5, startAfter, revision });
        seen.push(...page.records.map((r) => r.key));
        assert.equal(page.remaining, live.length - seen.length);
        revision = page.revision;
        if (page.remaining === 0) break;
        assert.equal(page.records.length, 5);
        startAfter = page.records[page.records.length - 1].key;
      }
      assert.deepEqual(seen, live);
    }));

  test(`${name}.list() with startAfter before the prefix starts at the prefix, past it returns nothing`, () =>
    withStore(open, async (store) => {
      for (const key of ["/a/1", "/b/1", "/b/2", "/c/1"]) await store.create(key, "v");
      assert.deepEqual((await store.list({ prefix: "/b/", startAfter: "/a/zzz" })).records.length, 2);
      assert.deepEqual((await store.list({ prefix: "/b/", startAfter: "/b/1" })).records[0].key, "/b/2");
      assert.deepEqual(await store.list({ prefix: "/b/", startAfter: "/b/9" }), {
        records: [],
        revision: 4,
        remaining: 0,
      });
    }));

  test(`${name}.list() at an old revision shows the state as of that revision`, () =>
    withStore(open, async (store) => {
      const a = await store.create("/k/a", "a1");
      const b = await store.create("/k/b", "b1");
      const atTwo = await store.list({ prefix: "/k/", revision: 2 });
      await store.update("/k/a", "a2", a.revision);
      await store.delete("/k/b");
      await store.create("/k/c", "c1");
      const again = await store.list({ prefix: "/k/", revision: 2 });
      assert.deepEqual(again, atTwo);
      assert.deepEqual(again, { records: [a, b], revision: 2, remaining: 0 });
      assert.deepEqual(await keysOf(store, "/k/", 4), ["/k/a"]);
      const paged = await store.list({ prefix: "/k/", revision: 2, limit: 1 });
      assert.deepEqual(paged, { records: [a], revision: 2, remaining: 1 });
    }));

  test(`${name}.compact() keeps the newest revisions readable and fails older reads with Compacted`, () =>
    withStore(open, async (store) => {
      const a = await store.create("/k/a", "a1");
      await store.create("/k/b", "b1");
      await store.delete("/k/b");
      const a2 = await store.update("/k/a", "a2", a.revision);
      const a3 = await store.update("/k/a", "a3", a2.revision);
      const c = await store.create("/k/c", "c1");
      const atFour = await store.list({ prefix: "/k/", revision: 4 });
      assert.deepEqual(atFour.records, [a2]);
      assert.equal(await store.compact(2), 4);
      assert.equal(await store.compactedRevision(), 4);
      const error = await storageError(store.list({ prefix: "/k/", revision: 3 }), "Compacted");
      assert.equal(error.compactedRevision, 4);
      assert.deepEqual(
        await store.list({ prefix: "/k/", revision: 4 }),
        atFour,
        "the compacted revision stays readable",
      );
      assert.deepEqual((await store.list({ prefix: "/k/" })).records, [a3, c]);
      assert.equal(await store.get("/k/b"), undefined);
      assert.equal(await store.count("/k/"), 2);
      assert.equal(await store.compact(5), 4, "compaction never moves backwards");
      assert.equal(await store.compact(0), 6);
      assert.deepEqual((await store.list({ prefix: "/k/", revision: 6 })).records, [a3, c]);
    }));

  test(`${name}.compact() keeps revisions increasing and deleted keys recreatable`, () =>
    withStore(open, async (store) => {
      const a = await store.create("/k/a", "a1");
      await store.delete("/k/a");
      assert.equal(await store.compact(0), 2);
      assert.equal(await store.currentRevision(), 2);
      assert.equal(await store.get("/k/a"), undefined);
      const again = await store.create("/k/a", "a2");
      assert.equal(again.revision, 3);
      assert.ok(again.createRevision > a.createRevision);
      const updated = await store.update("/k/a", "a3", again.revision);
      assert.equal(updated.createRevision, again.revision);
    }));
}
