// The SQL both backends share: one table, the indexes that serve the common searches newest first, and the search
// itself as keyset paging over (time, id) bounded by the listing's snapshot, so pages stay stable while events
// are appended. Placeholders are produced by the backend (`?` for SQLite, `$n` for PostgreSQL).

import type { AuditEventRow, AuditSearch, FilterColumn } from "./types.ts";

export const COLUMN: Readonly<Record<FilterColumn, string>> = {
  auditID: "audit_id",
  stage: "stage",
  level: "level",
  verb: "verb",
  username: "username",
  apiGroup: "api_group",
  resource: "resource",
  namespace: "namespace",
  name: "name",
  code: "code",
  instance: "instance",
};

/** Columns after id, in insert order. */
export const INSERT_COLUMNS = [
  "time",
  "audit_id",
  "stage",
  "level",
  "verb",
  "username",
  "api_group",
  "resource",
  "namespace",
  "name",
  "code",
  "instance",
  "event",
] as const;

/** A row's values in INSERT_COLUMNS order. */
export function rowValues(r: AuditEventRow): (string | number)[] {
  return [
    r.time,
    r.auditID,
    r.stage,
    r.level,
    r.verb,
    r.username,
    r.apiGroup,
    r.resource,
    r.namespace,
    r.name,
    r.code,
    r.instance,
    r.line,
  ];
}

export function createTableSql(idColumn: string, timeType: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS audit_events (
      id ${idColumn}, time ${timeType} NOT NULL, audit_id TEXT NOT NULL, stage TEXT NOT NULL, level TEXT NOT NULL,
      verb TEXT NOT NULL, username TEXT NOT NULL, api_group TEXT NOT NULL, resource TEXT NOT NULL,
      namespace TEXT NOT NULL, name TEXT NOT NULL, code INTEGER NOT NULL, instance TEXT NOT NULL, event TEXT NOT NULL)`,
    // Newest first overall, by user (the common question: what did alice do), by resource, and by request.
    "CREATE INDEX IF NOT EXISTS audit_events_time ON audit_events (time, id)",
    "CREATE INDEX IF NOT EXISTS audit_events_user ON audit_events (username, time, id)",
    "CREATE INDEX IF NOT EXISTS audit_events_resource ON audit_events (resource, time, id)",
    "CREATE INDEX IF NOT EXISTS audit_events_audit_id ON audit_events (audit_id)",
  ];
}

/** The WHERE clause and parameters of a search; `placeholder(n)` names the n-th parameter (1-based). */
export function searchSql(
  query: AuditSearch,
  snapshot: number,
  placeholder: (n: number) => string,
): { sql: string; params: (string | number)[] } {
  const params: (string | number)[] = [];
  const next = (value: string | number) => {
    params.push(value);
    return placeholder(params.length);
  };
  const where = [`id <= ${next(snapshot)}`];
  for (const filter of query.filters) {
    where.push(`${COLUMN[filter.column]} ${filter.equals ? "=" : "<>"} ${next(filter.value)}`);
  }
  if (query.since !== undefined) where.push(`time >= ${next(query.since)}`);
  if (query.until !== undefined) where.push(`time < ${next(query.until)}`);
  if (query.after) where.push(`(time, id) < (${next(query.after.time)}, ${next(query.after.id)})`);
  const sql = `SELECT id, time, instance, event FROM audit_events WHERE ${where.join(" AND ")}
    ORDER BY time DESC, id DESC LIMIT ${next(Math.max(1, query.limit) + 1)}`;
  return { sql, params };
}

/**
 * Every stage of one request by audit ID, oldest first, from one source: the platform's own rows ("" sorts first)
 * when there are any, so an event a virtual cluster forwarded under a platform event's ID never stands in for it.
 * Placeholders name the ID twice (`?`, `?` or `$1`, `$1`).
 */
export function byAuditIdSql(first: string, second: string): string {
  return `SELECT id, time, instance, event FROM audit_events WHERE audit_id = ${first}
    AND instance = (SELECT MIN(instance) FROM audit_events WHERE audit_id = ${second}) ORDER BY time, id`;
}
