// Messages between the audit log (main thread, audit-pipe.ts) and its worker (audit-worker.ts): batches of event
// lines and settings go in; failures, counts, call results and emptied batch buffers come back. Plain data only
// (structured clone); batch buffers are transferred, not copied.

import type { AuditDatastoreSettings, DatastoreReport } from "./datastore/audit-datastore.ts";
import type { AuditSearch } from "./datastore/types.ts";
import type { RotationSettings, SinkOperation } from "./rotating-file-sink.ts";

export interface WorkerConfig {
  dataDir: string;
  /** The audit log file; absent: no file (audit disabled). */
  file?: { path: string; rotation: RotationSettings };
  /** The datastore; absent: none. */
  datastore?: AuditDatastoreSettings;
  /** Tuning for tests: sweep interval, spool bound, first retry delay. */
  tuning?: { sweepIntervalMs?: number; maxSpooledEvents?: number; retryDelayMs?: number };
}

export type WorkerCall =
  | { method: "settle" }
  | { method: "search"; query: AuditSearch }
  | { method: "byAuditId"; auditID: string }
  | { method: "sweep" }
  | { method: "close" };

export type ToWorker =
  | { type: "configure"; config: WorkerConfig }
  /**
   * Event lines as UTF-8 in bytes [0, length) of `bytes`, each ending in a newline (an event line never holds a
   * raw one). `toFile`: the platform's own events (file and datastore); false: a virtual cluster's (datastore
   * only). The worker hands `bytes` back (a "buffer" message) once it is done with them.
   */
  | { type: "events"; bytes: ArrayBuffer; length: number; toFile: boolean; instance: string }
  | { type: "call"; id: number; call: WorkerCall };

export type FileReport =
  | { kind: "failure"; operation: SinkOperation; message: string }
  | { kind: "dropped"; count: number };

export type FromWorker =
  /** A batch buffer the worker is done with, for the next batch. */
  | { type: "buffer"; bytes: ArrayBuffer }
  | { type: "file"; report: FileReport }
  | { type: "datastore"; report: DatastoreReport }
  | { type: "stats"; fileQueuedBytes: number; datastoreSpooled: number }
  | { type: "reply"; id: number; ok: true; value: unknown }
  | { type: "reply"; id: number; ok: false; message: string };
