// The datastore a configuration names: embedded SQLite in the data directory when `dataStoreEndpoint` is empty,
// PostgreSQL for a postgres:// (or postgresql://) address.

import { join } from "node:path";
import { PostgresAuditStore } from "./postgres-audit-store.ts";
import { SqliteAuditStore } from "./sqlite-audit-store.ts";
import type { AuditStore } from "./types.ts";

/** The embedded store's file in the data directory. */
export const EMBEDDED_AUDIT_FILE = "audit-events.db";

export function isPostgresEndpoint(endpoint: string): boolean {
  return /^postgres(ql)?:\/\//i.test(endpoint);
}

export interface OpenAuditStoreOptions {
  /** Empty: the embedded store in `dataDir`. */
  endpoint: string;
  dataDir: string;
  onIdleError?: (error: Error) => void;
}

export function openAuditStore(options: OpenAuditStoreOptions): AuditStore {
  if (!options.endpoint) return new SqliteAuditStore(join(options.dataDir, EMBEDDED_AUDIT_FILE));
  if (isPostgresEndpoint(options.endpoint)) {
    return new PostgresAuditStore({ connectionString: options.endpoint, onIdleError: options.onIdleError });
  }
  throw new Error("the audit datastore endpoint must be empty (embedded) or a postgres:// address");
}
