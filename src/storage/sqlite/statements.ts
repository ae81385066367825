// Every SQL statement the store runs, prepared once. Hot-path reads return arrays (no per-row object keys).

import type { DatabaseSync, StatementSync } from "node:sqlite";

export interface Statements {
  begin: StatementSync;
  commit: StatementSync;
  rollback: StatementSync;
  /** A savepoint around the rows of one chained write, so they are appended all or none. */
  savepoint: StatementSync;
  release: StatementSync;
  rollbackToSavepoint: StatementSync;
  /** name -> [id, deleted, create_revision, value] of the newest row. */
  latest: StatementSync;
  /** (id, name, created, deleted, create_revision, prev_revision, value): the one insert of the append path. */
  append: StatementSync;
  /** Newest row per name at a revision, skipping tombstones: (lower, end, revision, limit) -> [name, id, create_revision, value]. */
  listFrom: StatementSync;
  listAfter: StatementSync;
  /** Live names at a revision: (lower, end, revision) -> [count]. */
  countFrom: StatementSync;
  countAfter: StatementSync;
  /** Log rows after a revision under a prefix, with the previous row's value: (after, prefix, end, limit). */
  history: StatementSync;
  lastRevision: StatementSync;
  readMeta: StatementSync;
  writeMeta: StatementSync;
  /** Rows superseded by a write in (from, to]. */
  compactSuperseded: StatementSync;
  /** Tombstones in (from, to]. */
  compactTombstones: StatementSync;
}

// The subquery walks kv_name_id in name order (index only); its ORDER BY lets SQLite skip the outer sort, so LIMIT
// stops the scan early. With one MAX() aggregate, SQLite takes the bare column `deleted` from the max row.
const listSql = (op: ">=" | ">") => `
  SELECT m.name, k.id, k.create_revision, k.value
  FROM (SELECT name, MAX(id) AS mid, deleted FROM kv
        WHERE name ${op} ?1 AND name < CAST(?2 AS TEXT) AND id <= ?3 GROUP BY name ORDER BY name) AS m
  JOIN kv AS k ON k.id = m.mid
  WHERE m.deleted = 0 ORDER BY m.name LIMIT ?4`;

const countSql = (op: ">=" | ">") => `
  SELECT COUNT(*) FROM (SELECT MAX(id), deleted FROM kv
        WHERE name ${op} ?1 AND name < CAST(?2 AS TEXT) AND id <= ?3 GROUP BY name) WHERE deleted = 0`;

export function prepareStatements(db: DatabaseSync): Statements {
  const rows = { returnArrays: true } as const;
  return {
    begin: db.prepare("BEGIN IMMEDIATE"),
    commit: db.prepare("COMMIT"),
    rollback: db.prepare("ROLLBACK"),
    savepoint: db.prepare("SAVEPOINT chained_write"),
    release: db.prepare("RELEASE chained_write"),
    rollbackToSavepoint: db.prepare("ROLLBACK TO chained_write"),
    latest: db.prepare(
      "SELECT id, deleted, create_revision, value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1",
      rows,
    ),
    append: db.prepare(
      "INSERT INTO kv (id, name, created, deleted, create_revision, prev_revision, value) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    listFrom: db.prepare(listSql(">="), rows),
    listAfter: db.prepare(listSql(">"), rows),
    countFrom: db.prepare(countSql(">="), rows),
    countAfter: db.prepare(countSql(">"), rows),
    // `+k.name` keeps SQLite on the id range (pages advance through the log) instead of sorting a prefix's history.
    history: db.prepare(
      `SELECT k.id, k.name, k.created, k.deleted, k.create_revision, k.prev_revision, k.value, p.value, p.create_revision
       FROM kv AS k LEFT JOIN kv AS p ON p.id = k.prev_revision
       WHERE k.id > ?1 AND +k.name >= ?2 AND +k.name < CAST(?3 AS TEXT) ORDER BY k.id LIMIT ?4`,
      rows,
    ),
    lastRevision: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'kv'", rows),
    readMeta: db.prepare("SELECT value FROM meta WHERE name = ?", rows),
    writeMeta: db.prepare(
      "INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
    ),
    compactSuperseded: db.prepare(
      "DELETE FROM kv WHERE id IN (SELECT prev_revision FROM kv WHERE id > ? AND id <= ? AND prev_revision > 0)",
    ),
    compactTombstones: db.prepare("DELETE FROM kv WHERE id > ? AND id <= ? AND deleted = 1"),
  };
}
