// The embedded audit datastore: a SQLite file of its own in the data directory (not the resource store, so
// audit volume never slows or bloats it). node:sqlite is synchronous; the audit worker owns it (audit-worker.ts),
// so its inserts and searches never run on the thread that serves requests.

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { byAuditIdSql, createTableSql, INSERT_COLUMNS, rowValues, searchSql } from "./sql.ts";
import type { AuditEventRow, AuditSearch, AuditSearchResult, AuditStore, StoredAuditEvent } from "./types.ts";

/** Rows deleted per statement of a sweep, so a large sweep never holds the write lock long. */
const SWEEP_CHUNK = 5_000;

interface Row {
  id: number;
  time: number;
  instance: string;
  event: string;
}

const stored = (row: Row): StoredAuditEvent => ({
  id: row.id,
  time: row.time,
  instance: row.instance,
  line: row.event,
});

export class SqliteAuditStore implements AuditStore {
  private readonly db: DatabaseSync;
  private readonly insert: ReturnType<DatabaseSync["prepare"]>;

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.db = new DatabaseSync(path);
    // 16 KiB pages (a new file only): an event line is 0.5 to 2 KiB, and with 4 KiB pages every few rows split a
    // page (about a sixth of an insert's CPU). A rollback journal, not WAL: only this worker's connection uses the
    // file, so WAL's concurrent readers buy nothing, while its checkpoints copy every appended page a second time (a
    // fifth of an insert's CPU). Appended pages need no journal; FULL syncs the journal before each commit, so a
    // commit survives a power loss.
    this.db.exec(
      "PRAGMA page_size = 16384; PRAGMA journal_mode = TRUNCATE; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;",
    );
    for (const statement of createTableSql("INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER")) this.db.exec(statement);
    const marks = INSERT_COLUMNS.map(() => "?").join(", ");
    this.insert = this.db.prepare(`INSERT INTO audit_events (${INSERT_COLUMNS.join(", ")}) VALUES (${marks})`);
  }

  async append(rows: readonly AuditEventRow[]): Promise<void> {
    if (rows.length === 0) return;
    this.db.exec("BEGIN");
    try {
      for (const row of rows) this.insert.run(...rowValues(row));
      this.db.exec("COMMIT");
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  async search(query: AuditSearch): Promise<AuditSearchResult> {
    const snapshot = query.after?.snapshot ?? this.maxId();
    const { sql, params } = searchSql(query, snapshot, () => "?");
    const rows = this.db.prepare(sql).all(...params) as unknown as Row[];
    const events = rows.slice(0, query.limit).map(stored);
    const last = events.at(-1);
    const next = rows.length > query.limit && last ? { time: last.time, id: last.id, snapshot } : undefined;
    return { events, snapshot, next };
  }

  async byAuditId(auditID: string): Promise<StoredAuditEvent[]> {
    const rows = this.db.prepare(byAuditIdSql("?", "?")).all(auditID, auditID) as unknown as Row[];
    return rows.map(stored);
  }

  async sweep(before: number): Promise<number> {
    const chunk = this.db.prepare(
      `DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE time < ? LIMIT ${SWEEP_CHUNK})`,
    );
    let total = 0;
    for (;;) {
      const { changes } = chunk.run(before);
      total += Number(changes);
      if (Number(changes) < SWEEP_CHUNK) return total;
    }
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }

  private maxId(): number {
    const row = this.db.prepare("SELECT coalesce(max(id), 0) AS max FROM audit_events").get() as { max: number };
    return row.max;
  }
}
