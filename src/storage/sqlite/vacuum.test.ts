import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, test } from "node:test";
import { eventually } from "../../utils/testing-eventually.ts";
import type { StoreStats } from "../store-stats.ts";
import type { KeyValueStore } from "../types.ts";
import type { ConversionEvent } from "./auto-vacuum.ts";
import { openDatabase } from "./schema.ts";
import { openSqliteStore } from "./sqlite-store.ts";
import { withoutFsync } from "./without-fsync.ts";

const dir = mkdtempSync(join(tmpdir(), "vacuum-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `store-${++files}.db`);
const VALUE = "v".repeat(1000);

async function fill(store: KeyValueStore, prefix: string, count: number): Promise<void> {
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) writes.push(store.create(`${prefix}${i}`, VALUE));
  await Promise.all(writes);
}

async function empty(store: KeyValueStore, prefix: string, count: number): Promise<void> {
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) writes.push(store.delete(`${prefix}${i}`));
  await Promise.all(writes);
}

async function statsWhen(store: KeyValueStore, done: (stats: StoreStats) => boolean): Promise<StoreStats> {
  let stats = await store.stats!();
  await eventually(async () => {
    stats = await store.stats!();
    return done(stats);
  }, "the store's expected stats");
  return stats;
}

test("SqliteStore returns the pages compaction freed to the file system, with no step of its own", async () => {
  const path = freshPath();
  const store = await openSqliteStore({ path, checkpoint: { intervalMs: 20, truncateAfterIdleMs: 50 } });
  try {
    assert.equal((await store.stats!()).autoVacuum, "incremental", "a new file is made for incremental vacuum");
    await fill(store, "/live/", 200);
    await fill(store, "/churn/", 5000);
    await empty(store, "/churn/", 5000);
    const full = await store.stats!();
    assert.ok(full.inUseBytes > 5 * 1024 * 1024, `the churn is in the file: ${full.inUseBytes}`);

    await store.compact(0);
    const shrunk = await statsWhen(store, (s) => s.freeBytes === 0 && s.walBytes === 0);
    assert.ok(shrunk.inUseBytes < 400 * 1024, `200 live values left: ${shrunk.inUseBytes} bytes in use`);
    assert.equal(shrunk.sizeBytes, statSync(path).size, "no WAL left once writes paused");
    assert.equal(shrunk.sizeBytes, shrunk.inUseBytes, "the file is the pages in use");
    assert.ok(shrunk.lastReclaim && shrunk.lastReclaim.freedBytes > 5 * 1024 * 1024, "the run is recorded");
    assert.equal((await store.list({ prefix: "/live/" })).records.length, 200);
  } finally {
    await store.close();
  }
});

test("SqliteStore gives back a small store's free pages when they are half of it, under the 64 KiB floor", async () => {
  const path = freshPath();
  const store = await openSqliteStore({ path, checkpoint: { intervalMs: 20, truncateAfterIdleMs: 50 } });
  try {
    await fill(store, "/live/", 2);
    await fill(store, "/churn/", 30);
    const small = await statsWhen(store, (s) => s.walBytes === 0);
    await empty(store, "/churn/", 30);
    await store.compact(0);
    // Freed: less than 64 KiB, but more than the pages still in use.
    const shrunk = await statsWhen(store, (s) => s.freeBytes === 0 && s.walBytes === 0);
    assert.ok(shrunk.sizeBytes < small.sizeBytes, `${shrunk.sizeBytes} bytes, from ${small.sizeBytes}`);
    assert.ok(small.sizeBytes - shrunk.sizeBytes < 64 * 1024, "what was freed is under the floor");
  } finally {
    await store.close();
  }
});

test("SqliteStore.statsVersion() stays put only while stats() reports the same: through writes, checkpoints, compaction and vacuum", async () => {
  const store = await openSqliteStore({ path: freshPath(), checkpoint: { intervalMs: 20, truncateAfterIdleMs: 50 } });
  // What a reader that trusts the version sees (StoreMonitor): sizes read again only when the version moved.
  let seen = { version: store.statsVersion!(), stats: await store.stats!() };
  const stale: string[] = [];
  let looks = 0;
  const look = async () => {
    looks++;
    const version = store.statsVersion!();
    const stats = await store.stats!();
    if (version !== seen.version) seen = { version, stats };
    else if (JSON.stringify(stats) !== JSON.stringify(seen.stats)) stale.push(JSON.stringify({ version, stats }));
  };
  const looking = setInterval(() => void look(), 2);
  try {
    await fill(store, "/live/", 100);
    await fill(store, "/churn/", 2000);
    await empty(store, "/churn/", 2000);
    await store.compact(0);
    await eventually(() => seen.stats.freeBytes === 0 && seen.stats.walBytes === 0, "the reader sees the file shrink");
    assert.ok(seen.stats.lastReclaim && seen.stats.lastReclaim.freedBytes > 1024 * 1024, "and the vacuum that did it");
    assert.deepEqual(stale, [], `stats changed with the version unmoved (of ${looks} looks)`);
  } finally {
    clearInterval(looking);
    await store.close();
  }
});

test("SqliteStore's vacuum runs in steps that let commits through between them", async () => {
  const store = await openSqliteStore({
    path: freshPath(),
    // The smallest steps (8 pages each): returning ~6 MiB takes hundreds of them.
    vacuum: { stepBudgetMs: 0.001 },
  });
  try {
    await fill(store, "/churn/", 5000);
    await empty(store, "/churn/", 5000);
    await store.compact(0);
    const during = await store.stats!();
    assert.ok(during.freeBytes > 1024 * 1024, "the vacuum has just started");
    // Writes go first: each commits long before the hundreds of steps are done.
    for (let i = 0; i < 5; i++) await store.create(`/between/steps-${i}`, "v");
    const afterWrites = await store.stats!();
    assert.ok(afterWrites.freeBytes > 0, "the writes committed while the vacuum was still under way");
    const done = await statsWhen(store, (s) => s.freeBytes === 0);
    assert.ok(done.lastReclaim && done.lastReclaim.freedBytes >= during.freeBytes - 64 * 1024, "and it finished");
    assert.equal(await store.count("/between/"), 5);
  } finally {
    await store.close();
  }
});

test("SqliteStore with vacuum false leaves freed pages for later writes", async () => {
  const store = await openSqliteStore({ path: freshPath(), vacuum: false });
  try {
    await fill(store, "/churn/", 2000);
    await empty(store, "/churn/", 2000);
    await store.compact(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok((await store.stats!()).freeBytes > 1024 * 1024);
  } finally {
    await store.close();
  }
});

/** A store file as an older version made it: auto_vacuum NONE. */
async function legacyStore(path: string, keys: number): Promise<void> {
  const store = await openSqliteStore({ path });
  await fill(store, "/k/", keys);
  await store.close();
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = DELETE; PRAGMA auto_vacuum = NONE; VACUUM");
  assert.equal(Object.values(db.prepare("PRAGMA auto_vacuum").get() ?? {})[0], 0);
  db.close();
}

test("openSqliteStore() converts an older store file to incremental vacuum once, saying so", async () => {
  const path = freshPath();
  await legacyStore(path, 300);
  const events: ConversionEvent[] = [];
  const store = await openSqliteStore({ path, onConversion: (event) => events.push(event) });
  try {
    assert.deepEqual(
      events.map((e) => e.phase),
      ["started", "converted"],
    );
    assert.ok(events[1].bytesBefore > 300 * 1000 && events[1].durationMs !== undefined);
    assert.equal((await store.stats!()).autoVacuum, "incremental");
    assert.equal((await store.list({ prefix: "/k/" })).records.length, 300, "every key is still there");
    await store.create("/k/after", "v");
  } finally {
    await store.close();
  }
  const again: ConversionEvent[] = [];
  const reopened = await openSqliteStore({ path, onConversion: (event) => again.push(event) });
  await reopened.close();
  assert.deepEqual(again, [], "once converted, never again");
});

test("openSqliteStore() leaves a store file above convertMaxBytes as it is, and says why", async () => {
  const path = freshPath();
  await legacyStore(path, 100);
  const events: ConversionEvent[] = [];
  const store = await openSqliteStore({ path, convertMaxBytes: 1024, onConversion: (event) => events.push(event) });
  try {
    assert.equal(events.length, 1);
    assert.equal(events[0].phase, "skipped");
    assert.match(events[0].reason ?? "", /larger than the 1 KiB converted at start/);
    const stats = await store.stats!();
    assert.equal(stats.autoVacuum, "none");
    await fill(store, "/more/", 10);
    await empty(store, "/more/", 10);
    await store.compact(0);
    assert.equal((await store.list({ prefix: "/k/" })).records.length, 100, "it serves as before");
  } finally {
    await store.close();
  }
});

test("withoutFsync() runs a step with synchronous=NORMAL and puts the connection's mode back", () => {
  const db = openDatabase(freshPath(), "FULL");
  const mode = () => Object.values(db.prepare("PRAGMA synchronous").get() ?? {})[0];
  try {
    assert.equal(
      withoutFsync(db, () => mode()),
      1,
    );
    assert.equal(mode(), 2);
    assert.throws(() =>
      withoutFsync(db, () => {
        throw new Error("step failed");
      }),
    );
    assert.equal(mode(), 2, "also after a failed step");
  } finally {
    db.close();
  }
});

test("SqliteStore.rebuild() rebuilds the serving file densely (the maintenance window's VACUUM) and keeps serving", async () => {
  const path = freshPath();
  // Incremental vacuum off: the pages compaction frees stay in the file until the rebuild.
  const store = await openSqliteStore({ path, vacuum: false, checkpoint: { intervalMs: 20, truncateAfterIdleMs: 50 } });
  try {
    await fill(store, "/live/", 100);
    await fill(store, "/churn/", 2000);
    await empty(store, "/churn/", 2000);
    await store.compact(0);
    const before = await store.stats!();
    assert.ok(before.freeBytes > 1024 * 1024, `free pages before: ${before.freeBytes}`);
    const run = await store.rebuild!();
    assert.ok(run && run.freedBytes > 1024 * 1024, `the run returned the free pages: ${JSON.stringify(run)}`);
    const after = await store.stats!();
    assert.equal(after.freeBytes, 0);
    assert.ok(after.sizeBytes < before.sizeBytes);
    assert.equal((await store.list({ prefix: "/live/" })).records.length, 100);
    await store.create("/live/after", VALUE);
    assert.equal((await store.get("/live/after"))?.value, VALUE);
  } finally {
    await store.close();
  }
});
