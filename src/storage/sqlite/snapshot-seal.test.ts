import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import fc from "fast-check";
import { snapshotStoreFile } from "./snapshot.ts";
import { readSnapshotSeal, removeSeal, sealMatches, sealSnapshot } from "./snapshot-seal.ts";
import { openSqliteStore } from "./sqlite-store.ts";

const dir = mkdtempSync(join(tmpdir(), "snapshot-seal-"));
const key = { id: "k000000000001", secret: new Uint8Array(32).fill(7) };
const sealed = join(dir, "sealed.db");
let copies = 0;
after(() => rmSync(dir, { recursive: true, force: true }));

before(async () => {
  const path = join(dir, "store.db");
  const store = await openSqliteStore({ path });
  for (let i = 0; i < 50; i++) await store.create(`/management.platform.sh/users//u${i}`, JSON.stringify({ i }));
  const first = await store.create("/k/deleted", "x");
  await store.delete(first.key);
  await store.close();
  await snapshotStoreFile(path, sealed);
  sealSnapshot(sealed, key);
});

/** A copy of the sealed snapshot with `edit` applied to it. */
function edited(edit: (db: DatabaseSync) => void): string {
  const file = join(dir, `copy-${++copies}.db`);
  copyFileSync(sealed, file);
  const db = new DatabaseSync(file);
  edit(db);
  db.close();
  return file;
}

const matches = (file: string, with_ = key) => {
  const seal = readSnapshotSeal(file);
  assert.ok(seal, "sealed");
  return sealMatches(file, seal, with_);
};

test("sealSnapshot() makes a seal that matches the untouched snapshot, under its key only", () => {
  assert.equal(matches(sealed), true);
  assert.equal(matches(sealed, { id: key.id, secret: new Uint8Array(32).fill(8) }), false);
  assert.equal(matches(sealed, { id: "k000000000002", secret: key.secret }), false);
});

test("sealMatches() notices any change: a row edited, added or removed, the revision counter, the schema", () => {
  const edits: [string, (db: DatabaseSync) => void][] = [
    ["a value", (db) => db.exec(`UPDATE kv SET value = '{"i":1,"admin":true}' WHERE name LIKE '%/u1'`)],
    ["a deleted flag", (db) => db.exec("UPDATE kv SET deleted = 0 WHERE deleted = 1")],
    [
      "a new row",
      (db) =>
        db.exec(
          `INSERT INTO kv (name, created, deleted, create_revision, prev_revision, value) VALUES ('/x', 1, 0, 0, 0, '{}')`,
        ),
    ],
    ["a removed row", (db) => db.exec("DELETE FROM kv WHERE id = (SELECT MAX(id) FROM kv)")],
    ["the revision counter", (db) => db.exec("UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'kv'")],
    ["the meta table", (db) => db.exec("INSERT OR REPLACE INTO meta VALUES ('compacted_revision', 3)")],
    ["a trigger", (db) => db.exec("CREATE TRIGGER t AFTER INSERT ON kv BEGIN SELECT 1; END")],
    ["a table", (db) => db.exec("CREATE TABLE extra (a)")],
    ["the seal's key id", (db) => db.exec("UPDATE snapshot_seal SET key_id = 'k000000000009'")],
  ];
  for (const [what, edit] of edits) assert.equal(matches(edited(edit)), false, what);
});

test("sealMatches() notices a value edited anywhere, whatever the edit (property)", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 49 }), fc.string({ minLength: 1, maxLength: 20 }), (row, text) => {
      const file = edited((db) =>
        db
          .prepare("UPDATE kv SET value = value || ? WHERE name = ?")
          .run(text, `/management.platform.sh/users//u${row}`),
      );
      const changed = !matches(file);
      rmSync(file);
      return changed;
    }),
    { numRuns: 25 },
  );
});

test("removeSeal() leaves the store as it was sealed; a copy without a seal reads as unsealed", () => {
  const file = edited(() => {});
  removeSeal(file);
  assert.equal(readSnapshotSeal(file), undefined);
  const db = new DatabaseSync(file, { readOnly: true });
  assert.equal(Number(db.prepare("SELECT COUNT(*) AS n FROM kv").get()?.n), 52);
  db.close();
});
