import assert from "node:assert/strict";
import { test } from "node:test";
import type { WatchEvent } from "../types.ts";
import { type Appender, AppendLog, type WriteRequest } from "./append-log.ts";
import { GroupCommit } from "./group-commit.ts";
import { openDatabase } from "./schema.ts";
import { prepareStatements } from "./statements.ts";

type Failure = "statement" | "transaction" | undefined;

/** A group commit over a real in-memory log whose append fails on demand, as SQLite can. */
function setup(
  failOn: (request: WriteRequest) => Failure = () => undefined,
  options: { maxBatch?: number; durable?: () => Promise<void> } = {},
) {
  const db = openDatabase(":memory:", "FULL");
  const statements = prepareStatements(db);
  const real = new AppendLog(statements, 0);
  const log: Appender = {
    get revision() {
      return real.revision;
    },
    set revision(value) {
      real.revision = value;
    },
    append(request) {
      const failure = failOn(request);
      // A failed statement leaves the transaction open; I/O errors or a full disk make SQLite roll it back.
      if (failure === "statement") throw new Error("string or blob too big");
      if (failure === "transaction") {
        statements.rollback.run();
        throw new Error("disk I/O error");
      }
      return real.append(request);
    },
  };
  const published: WatchEvent[][] = [];
  const commits = new GroupCommit({ db, statements, log, ...options, onCommit: (events) => published.push(events) });
  const rows = () => (db.prepare("SELECT name FROM kv ORDER BY id").all() as { name: string }[]).map((r) => r.name);
  return { commits, published, rows, close: () => db.close() };
}

const create = (key: string): WriteRequest => ({ type: "create", key, value: "v" });

test("GroupCommit commits the writes of one turn in one transaction, in submission order", async () => {
  const { commits, published, close } = setup();
  const records = await Promise.all(Array.from({ length: 50 }, (_, i) => commits.submit(create(`/k/${i}`))));
  assert.deepEqual(
    records.map((r) => r.revision),
    Array.from({ length: 50 }, (_, i) => i + 1),
  );
  assert.equal(published.length, 1);
  assert.equal(published[0].length, 50);
  assert.equal(commits.committedRevision, 50);
  close();
});

test("GroupCommit rejects only the write whose statement failed", async () => {
  const { commits, published, rows, close } = setup((r) => (r.key === "/k/bad" ? "statement" : undefined));
  const results = await Promise.allSettled(
    [create("/k/a"), create("/k/bad"), create("/k/c")].map((r) => commits.submit(r)),
  );
  assert.deepEqual(
    results.map((r) => (r.status === "fulfilled" ? r.value.revision : r.reason.message)),
    [1, "string or blob too big", 2],
  );
  assert.deepEqual(rows(), ["/k/a", "/k/c"]);
  assert.deepEqual(
    published.flat().map((e) => e.record.key),
    ["/k/a", "/k/c"],
  );
  close();
});

test("GroupCommit fails the whole batch when SQLite aborts the transaction, and rewinds the revision", async () => {
  let broken = true;
  const { commits, published, rows, close } = setup((r) => (broken && r.key === "/k/bad" ? "transaction" : undefined));
  const results = await Promise.allSettled(
    [create("/k/a"), create("/k/bad"), create("/k/c")].map((r) => commits.submit(r)),
  );
  assert.deepEqual(
    results.map((r) => r.status),
    ["rejected", "rejected", "rejected"],
  );
  assert.deepEqual(rows(), []);
  assert.deepEqual(published, [], "watchers hear nothing of a failed transaction");
  assert.equal(commits.committedRevision, 0);
  broken = false;
  assert.equal((await commits.submit(create("/k/a"))).revision, 1);
  close();
});

test("GroupCommit splits a burst into transactions of at most maxBatch writes", async () => {
  const { commits, published, close } = setup(undefined, { maxBatch: 10 });
  await Promise.all(Array.from({ length: 25 }, (_, i) => commits.submit(create(`/k/${i}`))));
  assert.deepEqual(
    published.map((batch) => batch.length),
    [10, 10, 5],
  );
  close();
});

test("GroupCommit.flushAll() commits queued writes before returning", async () => {
  const { commits, rows, close } = setup();
  const pending = commits.submit(create("/k/a"));
  commits.flushAll();
  assert.deepEqual(rows(), ["/k/a"]);
  assert.equal((await pending).revision, 1);
  close();
});

test("GroupCommit appends a chained write's rows in order, all or none, without failing the other writes", async () => {
  const { commits, published, rows, close } = setup((r) =>
    r.type === "update" && r.value === "bad" ? "statement" : undefined,
  );
  const first = await commits.submit(create("/k/c"));
  const [chained, other, broken] = await Promise.allSettled([
    commits.submitChain({ type: "chain", key: "/k/c", values: ["v2", "v3", "v4"], expectedRevision: first.revision }),
    commits.submit(create("/k/d")),
    commits.submitChain({ type: "chain", key: "/k/c", values: ["v5", "bad", "v7"], expectedRevision: 4 }),
  ]);
  assert.equal(chained.status, "fulfilled");
  assert.deepEqual(
    (chained as PromiseFulfilledResult<{ revision: number; value: string }[]>).value.map((r) => [r.revision, r.value]),
    [
      [2, "v2"],
      [3, "v3"],
      [4, "v4"],
    ],
  );
  assert.equal(other.status, "fulfilled");
  assert.equal(broken.status, "rejected", "a failure in the middle of a chain rejects the chain");
  assert.deepEqual(rows(), ["/k/c", "/k/c", "/k/c", "/k/c", "/k/d"], "nothing of the broken chain was kept");
  assert.deepEqual(
    published.at(-1)?.map((e) => [e.type, e.record.revision]),
    [
      ["update", 2],
      ["update", 3],
      ["update", 4],
      ["create", 5],
    ],
  );
  assert.equal(commits.committedRevision, 5, "no revision was taken by the undone chain");
  close();
});

test("GroupCommit with durable settles a batch once it resolves; watchers hear of the commit first", async () => {
  const fsyncs: PromiseWithResolvers<void>[] = [];
  const durable = () => {
    fsyncs.push(Promise.withResolvers<void>());
    return fsyncs[fsyncs.length - 1].promise;
  };
  const { commits, published, rows, close } = setup(undefined, { durable });
  let settled = 0;
  const writes = [commits.submit(create("/k/a")), commits.submit(create("/k/b"))].map((w) =>
    w.finally(() => settled++),
  );
  const taken = commits.submit(create("/k/a")).then(
    () => "created",
    (error: Error) => error.message,
  );
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(rows(), ["/k/a", "/k/b"], "committed");
  assert.equal(published.length, 1, "published at COMMIT");
  assert.equal(fsyncs.length, 1, "one durability barrier for the batch");
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, 0, "no write is acknowledged before it is durable");
  fsyncs[0].resolve();
  assert.deepEqual(
    (await Promise.all(writes)).map((r) => r.revision),
    [1, 2],
  );
  assert.match(await taken, /exists/);
  await commits.settled();
  close();
});

test("GroupCommit with durable fails a batch's writes when it rejects, and settled() waits for that", async () => {
  const fsync = Promise.withResolvers<void>();
  const { commits, close } = setup(undefined, { durable: () => fsync.promise });
  const write = commits.submit(create("/k/a"));
  await new Promise((resolve) => setImmediate(resolve));
  let done = false;
  const settled = commits.settled().then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(done, false);
  fsync.reject(new Error("fsync failed: EIO"));
  await assert.rejects(write, /fsync failed: EIO/);
  await settled;
  close();
});
