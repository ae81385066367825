// The single append path: every create, update and delete is checked against the key's newest row and appended as
// one log row with the next revision. Runs inside the group-commit transaction; nothing is visible until COMMIT.

import { StorageError, type StoredRecord, type WatchEvent } from "../types.ts";
import type { Statements } from "./statements.ts";

export type WriteRequest =
  | { type: "create"; key: string; value: string }
  | { type: "update"; key: string; value: string; expectedRevision: number }
  | { type: "delete"; key: string; expectedRevision?: number };

/** Consecutive updates of one key, appended all or none (see KeyValueStore.updateChain). */
export interface ChainRequest {
  type: "chain";
  key: string;
  values: string[];
  expectedRevision: number;
}

/** What group commit needs from the append path (an interface so tests can inject failures). */
export interface Appender {
  /** Revision of the newest appended row, committed or not (rewound by the caller when a transaction fails). */
  revision: number;
  append(request: WriteRequest): WatchEvent;
}

export class AppendLog implements Appender {
  revision: number;
  private readonly statements: Statements;

  constructor(statements: Statements, revision: number) {
    this.statements = statements;
    this.revision = revision;
  }

  append(request: WriteRequest): WatchEvent {
    const { key } = request;
    const row = this.statements.latest.get(key) as [number, number, number, string | null] | undefined;
    const current: StoredRecord | undefined =
      row && row[1] === 0 ? { key, value: row[3] ?? "", revision: row[0], createRevision: row[2] } : undefined;
    // A tombstone (or a compacted-away history) still chains: the next row names it as its predecessor.
    const prevRevision = row ? row[0] : 0;
    const revision = this.revision + 1;

    if (request.type === "create") {
      if (current) throw new StorageError("KeyExists", `key ${key} already exists`, { current });
      this.insert(revision, key, 1, 0, revision, prevRevision, request.value, current);
      return { type: "create", record: { key, value: request.value, revision, createRevision: revision } };
    }
    if (!current) throw new StorageError("NotFound", `key ${key} not found`);
    const expected = request.expectedRevision;
    if (expected !== undefined && expected !== current.revision) {
      throw new StorageError("Conflict", `key ${key} is at revision ${current.revision}, not ${expected}`, { current });
    }
    const { createRevision } = current;
    if (request.type === "update") {
      this.insert(revision, key, 0, 0, createRevision, prevRevision, request.value, current);
      return { type: "update", record: { key, value: request.value, revision, createRevision }, previous: current };
    }
    this.insert(revision, key, 0, 1, createRevision, prevRevision, null, current);
    return { type: "delete", record: { key, value: current.value, revision, createRevision }, previous: current };
  }

  private insert(
    revision: number,
    key: string,
    created: number,
    deleted: number,
    createRevision: number,
    prevRevision: number,
    value: string | null,
    current: StoredRecord | undefined,
  ): void {
    try {
      this.statements.append.run(revision, key, created, deleted, createRevision, prevRevision, value);
    } catch (error) {
      // The check above makes this unreachable for a single writer; the guard still turns a lost race into Conflict.
      if (isUniqueViolation(error)) {
        throw new StorageError("Conflict", `key ${key} was changed concurrently`, { current });
      }
      throw error;
    }
    this.revision = revision;
  }
}

function isUniqueViolation(error: unknown): boolean {
  // SQLITE_CONSTRAINT_UNIQUE; a primary-key clash (1555) would be a revision-counter bug and must surface as such.
  return (error as { errcode?: number } | undefined)?.errcode === 2067;
}
