import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, mock, test } from "node:test";
import { Checkpointer } from "./checkpointer.ts";
import { openDatabase } from "./schema.ts";
import { openSqliteStore } from "./sqlite-store.ts";

const dir = mkdtempSync(join(tmpdir(), "checkpointer-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `db-${++files}.db`);

/** Writes `rows` rows in one transaction (WAL only until a checkpoint copies them to the database file). */
function write(db: ReturnType<typeof openDatabase>, rows: number): void {
  db.exec("BEGIN IMMEDIATE");
  const insert = db.prepare(
    "INSERT INTO kv (name, created, deleted, create_revision, prev_revision, value) VALUES (?, 1, 0, 0, 0, ?)",
  );
  for (let i = 0; i < rows; i++) insert.run(`/k/${files}-${Math.random()}`, "v".repeat(2000));
  db.exec("COMMIT");
}

test("Checkpointer turns SQLite's automatic checkpoint off", () => {
  const db = openDatabase(freshPath(), "FULL");
  const checkpointer = new Checkpointer({ db, intervalMs: 1000, maxRows: 100 });
  try {
    assert.deepEqual(Object.values(db.prepare("PRAGMA wal_autocheckpoint").get() ?? {}), [0]);
  } finally {
    checkpointer.close();
    db.close();
  }
});

test("Checkpointer copies the WAL into the database file once the interval after a commit has passed", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const path = freshPath();
  const db = openDatabase(path, "FULL");
  const checkpointer = new Checkpointer({ db, intervalMs: 1000, maxRows: 10_000 });
  try {
    const before = statSync(path).size;
    write(db, 50);
    checkpointer.committed(50);
    mock.timers.tick(999);
    assert.equal(statSync(path).size, before, "not before the interval");
    mock.timers.tick(1);
    assert.ok(statSync(path).size > before + 50 * 2000, "the rows are in the database file");
  } finally {
    mock.timers.reset();
    checkpointer.close();
    db.close();
  }
});

test("Checkpointer checkpoints at the next turn once maxRows rows were written", async () => {
  const path = freshPath();
  const db = openDatabase(path, "FULL");
  const checkpointer = new Checkpointer({ db, intervalMs: 60_000, maxRows: 10 });
  try {
    const before = statSync(path).size;
    write(db, 10);
    checkpointer.committed(10);
    assert.equal(statSync(path).size, before, "never inside the commit's own task");
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(statSync(path).size > before + 10 * 2000);
  } finally {
    checkpointer.close();
    db.close();
  }
});

test("Checkpointer truncates the WAL file once no commit came for truncateAfterIdleMs after a checkpoint", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const path = freshPath();
  const db = openDatabase(path, "FULL");
  const checkpointer = new Checkpointer({ db, intervalMs: 100, maxRows: 10_000, truncateAfterIdleMs: 1000 });
  const wal = () => statSync(`${path}-wal`).size;
  try {
    write(db, 50);
    checkpointer.committed(50);
    mock.timers.tick(100);
    assert.ok(wal() > 50 * 2000, "a PASSIVE checkpoint leaves the WAL file at its size");
    // A commit during the quiet period puts the truncation off until after the next checkpoint.
    mock.timers.tick(500);
    write(db, 1);
    checkpointer.committed(1);
    mock.timers.tick(600);
    assert.ok(wal() > 50 * 2000, "not while writes come");
    mock.timers.tick(1000);
    assert.equal(wal(), 0, "emptied after a quiet second");
  } finally {
    mock.timers.reset();
    checkpointer.close();
    db.close();
  }
});

test("SqliteStore keeps every write across a reopen whether or not a checkpoint ran", async () => {
  const path = freshPath();
  const store = await openSqliteStore({ path, checkpoint: { intervalMs: 60_000, maxRows: 5 } });
  for (let i = 0; i < 12; i++) await store.create(`/k/${i}`, `v${i}`);
  await store.close();
  const reopened = await openSqliteStore({ path });
  try {
    const listed = await reopened.list({ prefix: "/k/" });
    assert.equal(listed.records.length, 12);
  } finally {
    await reopened.close();
  }
});
