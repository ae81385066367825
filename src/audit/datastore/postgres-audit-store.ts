// The shared audit datastore: one PostgreSQL table that several platform replicas append to and search. A batch is
// one multi-row INSERT (one round trip; parameters as plain text, which costs the client half the CPU per row of
// unnest over arrays, whose literals escape every quote of an event line). The table is created on first
// use under an advisory lock (replicas starting together), and again after an outage if need be.

import pg from "pg";
import { byAuditIdSql, createTableSql, INSERT_COLUMNS, rowValues, searchSql } from "./sql.ts";
import type { AuditEventRow, AuditSearch, AuditSearchResult, AuditStore, StoredAuditEvent } from "./types.ts";

const SCHEMA_LOCK = 0x61756469; // "audi"
/** Rows per INSERT: a statement takes at most 65,535 parameters. */
const MAX_STATEMENT_ROWS = Math.floor(65_535 / INSERT_COLUMNS.length);

/** `INSERT … VALUES ($1, …), (…)` for `count` rows; the last few sizes are kept (batches repeat their size). */
const insertSql = new Map<number, string>();

function insertStatement(count: number): string {
  let sql = insertSql.get(count);
  if (sql === undefined) {
    const width = INSERT_COLUMNS.length;
    const tuples = Array.from(
      { length: count },
      (_, row) => `(${INSERT_COLUMNS.map((_, column) => `$${row * width + column + 1}`).join(",")})`,
    );
    sql = `INSERT INTO audit_events (${INSERT_COLUMNS.join(", ")}) VALUES ${tuples.join(",")}`;
    if (insertSql.size >= 8) insertSql.clear();
    insertSql.set(count, sql);
  }
  return sql;
}

function insertParameters(rows: readonly AuditEventRow[]): (string | number)[] {
  const parameters: (string | number)[] = [];
  for (const row of rows) for (const value of rowValues(row)) parameters.push(value);
  return parameters;
}

export interface PostgresAuditStoreOptions {
  /** postgres://user:password@host:port/database?sslmode=... */
  connectionString: string;
  /** Connections in the pool (default 4). */
  maxConnections?: number;
  /** How long a connection attempt or a statement may take (default 10 s). */
  timeoutMs?: number;
  /** A pooled connection failed while idle (the server went away); the pool replaces it. */
  onIdleError?: (error: Error) => void;
}

interface Row {
  id: string;
  time: string;
  instance: string;
  event: string;
}

const stored = (row: Row): StoredAuditEvent => ({
  id: Number(row.id),
  time: Number(row.time),
  instance: row.instance,
  line: row.event,
});

export class PostgresAuditStore implements AuditStore {
  private readonly pool: pg.Pool;
  private ready: Promise<void> | undefined;

  constructor(options: PostgresAuditStoreOptions) {
    const timeout = options.timeoutMs ?? 10_000;
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 4,
      connectionTimeoutMillis: timeout,
      statement_timeout: timeout,
      query_timeout: timeout,
      idleTimeoutMillis: 30_000,
      application_name: "virtualcluster-platform-audit",
    });
    // Without a listener an idle connection's error would end the process.
    this.pool.on("error", (error) => options.onIdleError?.(error));
  }

  async append(rows: readonly AuditEventRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.schema();
    if (rows.length <= MAX_STATEMENT_ROWS) {
      await this.pool.query(insertStatement(rows.length), insertParameters(rows));
      return;
    }
    // More rows than one statement takes: several, in one transaction.
    await this.transaction(async (client) => {
      for (let start = 0; start < rows.length; start += MAX_STATEMENT_ROWS) {
        const part = rows.slice(start, start + MAX_STATEMENT_ROWS);
        await client.query(insertStatement(part.length), insertParameters(part));
      }
    });
  }

  async search(query: AuditSearch): Promise<AuditSearchResult> {
    await this.schema();
    const snapshot = query.after?.snapshot ?? (await this.maxId());
    const { sql, params } = searchSql(query, snapshot, (n) => `$${n}`);
    const { rows } = await this.pool.query<Row>(sql, params);
    const events = rows.slice(0, query.limit).map(stored);
    const last = events.at(-1);
    const next = rows.length > query.limit && last ? { time: last.time, id: last.id, snapshot } : undefined;
    return { events, snapshot, next };
  }

  async byAuditId(auditID: string): Promise<StoredAuditEvent[]> {
    await this.schema();
    const { rows } = await this.pool.query<Row>(byAuditIdSql("$1", "$1"), [auditID]);
    return rows.map(stored);
  }

  async sweep(before: number): Promise<number> {
    await this.schema();
    const { rowCount } = await this.pool.query("DELETE FROM audit_events WHERE time < $1", [before]);
    return rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async maxId(): Promise<number> {
    const { rows } = await this.pool.query<{ max: string }>("SELECT coalesce(max(id), 0) AS max FROM audit_events");
    return Number(rows[0].max);
  }

  /** Creates the table once; a failure (server unreachable) is retried by the next call. */
  private schema(): Promise<void> {
    this.ready ??= this.createSchema().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private createSchema(): Promise<void> {
    return this.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
      for (const statement of createTableSql("BIGSERIAL PRIMARY KEY", "BIGINT")) await client.query(statement);
    });
  }

  /** Runs `work` on one pooled connection inside BEGIN … COMMIT (ROLLBACK when it throws). */
  private async transaction(work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await work(client);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
