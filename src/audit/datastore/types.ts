// The audit datastore contract: events the policy logged, kept searchable for a while. One contract, two backends
// (embedded SQLite in the data directory, PostgreSQL shared by several platform replicas), one shared suite
// (conformance.ts). Rows carry the fields that searches select on beside the event's own JSON line, which is stored
// as the file log has it (already redacted).

/** The searchable fields of one event, read from its line (event-fields.ts). */
export interface AuditEventFields {
  auditID: string;
  stage: string;
  level: string;
  verb: string;
  username: string;
  apiGroup: string;
  resource: string;
  namespace: string;
  name: string;
  /** The response's code; 0 for stages without one (RequestReceived). */
  code: number;
  /** stageTimestamp in milliseconds since the epoch: the order of search results and the retention clock. */
  time: number;
}

/** One event to store. */
export interface AuditEventRow extends AuditEventFields {
  /** Where it happened: "" for the platform itself, "<namespace>/<name>" of a virtual cluster instance. */
  instance: string;
  /** The audit.k8s.io/v1 Event as one JSON line. */
  line: string;
}

/** A stored event as searches return it. */
export interface StoredAuditEvent {
  /** Row id: increases with every append, so it orders events of the same millisecond. */
  id: number;
  time: number;
  instance: string;
  line: string;
}

/** Columns a search may select on with = or !=. */
export const FILTER_COLUMNS = [
  "auditID",
  "stage",
  "level",
  "verb",
  "username",
  "apiGroup",
  "resource",
  "namespace",
  "name",
  "code",
  "instance",
] as const;
export type FilterColumn = (typeof FILTER_COLUMNS)[number];

export interface AuditFilter {
  column: FilterColumn;
  /** true: the column must equal value; false: must differ. */
  equals: boolean;
  value: string | number;
}

/** Where a page ended: the next page starts after this (time, id), within the same snapshot. */
export interface AuditCursor {
  time: number;
  id: number;
  /** The highest row id when the first page was read: later appends do not shift the pages of one listing. */
  snapshot: number;
}

export interface AuditSearch {
  filters: AuditFilter[];
  /** Inclusive lower bound of the event time (ms). */
  since?: number;
  /** Exclusive upper bound of the event time (ms). */
  until?: number;
  /** Most events to return (at least 1). */
  limit: number;
  after?: AuditCursor;
}

export interface AuditSearchResult {
  /** Newest first. */
  events: StoredAuditEvent[];
  /** The highest row id the search could see (the listing's snapshot). */
  snapshot: number;
  /** Set when more events match: pass it as `after` for the next page. */
  next?: AuditCursor;
}

export interface AuditStore {
  /** Stores events in one transaction: all of them or, on failure, none. */
  append(rows: readonly AuditEventRow[]): Promise<void>;
  search(query: AuditSearch): Promise<AuditSearchResult>;
  /**
   * Every stored stage of one request, oldest first; the platform's own when any exist (instance ""), so that a
   * virtual cluster's event stored under the same ID never answers for the platform's.
   */
  byAuditId(auditID: string): Promise<StoredAuditEvent[]>;
  /** Deletes events older than `before` (ms); returns how many. */
  sweep(before: number): Promise<number>;
  close(): Promise<void>;
}
