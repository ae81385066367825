import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { StorageError } from "../types.ts";
import { openSqliteStore } from "./sqlite-store.ts";

const dir = mkdtempSync(join(tmpdir(), "sqlite-faults-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `store-${++files}.db`);

const isNoSpace = (error: unknown) => error instanceof StorageError && error.storageCode === "NoSpace";

test("openSqliteStore() answers writes past its page cap with NoSpace, keeps reads, and writes again once there is room", async () => {
  let cap = 30;
  const changes: boolean[] = [];
  const path = freshPath();
  const store = await openSqliteStore({
    path,
    pageLimit: () => cap,
    onSpaceChange: (outOfSpace) => changes.push(outOfSpace),
  });
  try {
    const kept = await store.create("/k/kept", "kept");
    let failure: unknown;
    for (let i = 0; i < 1000 && failure === undefined; i++) {
      await store.create(`/k/${i}`, "x".repeat(2000)).catch((error: unknown) => {
        failure = error;
      });
    }
    assert.ok(isNoSpace(failure), `expected NoSpace, got ${String(failure)}`);
    assert.match((failure as Error).message, /out of space/);
    assert.ok((failure as Error).message.includes(path), "the message names the file");
    const revision = await store.currentRevision();
    // A failed write takes no revision and leaves nothing; reads work.
    await assert.rejects(store.create("/k/late", "x".repeat(2000)), isNoSpace);
    assert.equal(await store.currentRevision(), revision);
    assert.equal(await store.get("/k/late"), undefined);
    assert.deepEqual(await store.get("/k/kept"), kept);
    assert.ok((await store.list({ prefix: "/k/" })).records.length > 1);
    await assert.rejects(store.checkSpace!(), isNoSpace);

    cap = 10_000;
    await store.checkSpace!();
    const late = await store.create("/k/late", "x".repeat(2000));
    assert.equal(late.revision, revision + 1);
    assert.deepEqual(changes, [true, false]);
  } finally {
    await store.close();
  }
});

test("openSqliteStore() leaves the out-of-space state after a successful write even before any probe", async () => {
  let cap = 30;
  const store = await openSqliteStore({ path: freshPath(), pageLimit: () => cap });
  try {
    let full = false;
    for (let i = 0; i < 1000 && !full; i++) {
      full = await store.create(`/k/${i}`, "y".repeat(2000)).then(
        () => false,
        (error: unknown) => isNoSpace(error),
      );
    }
    assert.ok(full);
    cap = 10_000;
    await store.create("/k/after", "v");
    await store.checkSpace!();
  } finally {
    await store.close();
  }
});

test("checkSpace() passes on a store whose writes never failed", async () => {
  const store = await openSqliteStore({ path: ":memory:" });
  await store.checkSpace!();
  await store.close();
});

test("openSqliteStore() reports a file that is not a database as Corrupt, naming the file", async () => {
  const path = freshPath();
  writeFileSync(path, "this is not a SQLite database ".repeat(200));
  await assert.rejects(
    openSqliteStore({ path }),
    (error: unknown) =>
      error instanceof StorageError &&
      error.storageCode === "Corrupt" &&
      error.message === `storage ${path} is corrupt: file is not a database`,
  );
});
