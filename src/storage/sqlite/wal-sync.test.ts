import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { WalSync } from "./wal-sync.ts";

const dir = mkdtempSync(join(tmpdir(), "wal-sync-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A WalSync whose fsyncs the test finishes one by one. */
function controlled(maxInFlight?: number) {
  const started: PromiseWithResolvers<void>[] = [];
  const wal = new WalSync({
    path: join(dir, "unused.db"),
    maxInFlight,
    sync: () => {
      const fsync = Promise.withResolvers<void>();
      started.push(fsync);
      return fsync.promise;
    },
  });
  return { wal, started };
}

const state = (promise: Promise<unknown>) =>
  Promise.race([
    promise.then(
      () => "resolved",
      () => "rejected",
    ),
    new Promise((resolve) => setImmediate(() => resolve("pending"))),
  ]);

test("WalSync.request() starts an fsync of its own while fewer than maxInFlight run, else waits with the others for the next", async () => {
  const { wal, started } = controlled(2);
  const first = wal.request();
  const second = wal.request();
  assert.equal(started.length, 2, "two at once");
  // Asked while both run: their frames may be newer than either, so they wait for the next one, together.
  const third = wal.request();
  const fourth = wal.request();
  assert.equal(started.length, 2);
  started[1].resolve();
  assert.equal(await state(second), "resolved");
  assert.equal(await state(first), "pending", "each request waits for its own fsync only");
  assert.equal(started.length, 3, "the next fsync starts once one of the running ones ends");
  assert.equal(await state(third), "pending");
  started[2].resolve();
  assert.equal(await state(third), "resolved");
  assert.equal(await state(fourth), "resolved");
  started[0].resolve();
  assert.equal(await state(first), "resolved");
  assert.equal(started.length, 3);
  await wal.close();
});

test("WalSync fails the waiting and every later request after a failed fsync, and fsyncs nothing more", async () => {
  const { wal, started } = controlled(1);
  const first = wal.request();
  const second = wal.request();
  started[0].reject(new Error("EIO: i/o error"));
  await assert.rejects(first, /fsync of .*unused\.db-wal failed: EIO: i\/o error/);
  await assert.rejects(second, /failed: EIO/);
  await assert.rejects(wal.request(), /failed: EIO/);
  assert.match(wal.failure?.message ?? "", /EIO/);
  assert.equal(started.length, 1);
  await wal.close();
});

test("WalSync.request() fdatasyncs the -wal file beside the database", async () => {
  const path = join(dir, "real.db");
  writeFileSync(`${path}-wal`, "frames");
  const wal = new WalSync({ path });
  await wal.request();
  await Promise.all([wal.request(), wal.request()]);
  await wal.close();
  const missing = new WalSync({ path: join(dir, "absent.db") });
  await assert.rejects(missing.request(), /absent\.db-wal failed: ENOENT/);
  await missing.close();
});
