// Audit metrics, named as kube-apiserver names its own where one exists. Per-event counts are plain numbers
// added to prom-client when /metrics is read (collect), so counting an event costs no label hashing.

import { Counter, Gauge, type Registry } from "prom-client";
import type { SinkOperation } from "./rotating-file-sink.ts";
import type { AuditLevel } from "./types.ts";

/** Where events were dropped: the log file, the datastore, or a virtual cluster's sending to the platform. */
export type AuditPlugin = "log" | "datastore" | "forward";

export interface AuditMetrics {
  event(level: AuditLevel): void;
  /** Events that were never written (queue full, sink closed). */
  dropped(count: number, plugin?: AuditPlugin): void;
  failure(operation: SinkOperation): void;
  queuedBytes(bytes: number): void;
  datastoreFailure(): void;
  datastoreWritten(count: number): void;
  datastoreSpooled(events: number): void;
  datastoreSwept(count: number): void;
}

const LEVELS: readonly AuditLevel[] = ["None", "Metadata", "Request", "RequestResponse"];

export function createAuditMetrics(registry: Registry): AuditMetrics {
  const registers = [registry];
  const byLevel: Record<AuditLevel, number> = { None: 0, Metadata: 0, Request: 0, RequestResponse: 0 };
  let total = 0;
  new Counter({
    name: "apiserver_audit_event_total",
    help: "Counter of audit events generated and sent to the audit backend.",
    registers,
    collect() {
      this.inc(total);
      total = 0;
    },
  });
  new Counter({
    name: "apiserver_audit_level_total",
    help: "Counter of policy levels for audit events (1 per request).",
    labelNames: ["level"],
    registers,
    collect() {
      for (const level of LEVELS) {
        if (byLevel[level] > 0) this.inc({ level }, byLevel[level]);
        byLevel[level] = 0;
      }
    },
  });
  const errors = new Counter({
    name: "apiserver_audit_error_total",
    help: "Counter of audit events that failed to be audited properly (dropped, never written), by plugin: log (the file), datastore, forward (a virtual cluster's sending to the platform).",
    labelNames: ["plugin"],
    registers,
  });
  const failures = new Counter({
    name: "platform_audit_sink_failures_total",
    help: "Failed operations of the audit log file (open, write, rotate, compress, cleanup).",
    labelNames: ["operation"],
    registers,
  });
  const queue = new Gauge({
    name: "platform_audit_queue_bytes",
    help: "Bytes of audit events waiting to be written to the log file.",
    registers,
  });
  const datastoreFailures = new Counter({
    name: "platform_audit_datastore_failures_total",
    help: "Failed writes to the audit datastore (events stay spooled and are retried).",
    registers,
  });
  const datastoreWritten = new Counter({
    name: "platform_audit_datastore_events_total",
    help: "Audit events written to the audit datastore.",
    registers,
  });
  const datastoreSpooled = new Gauge({
    name: "platform_audit_datastore_spooled_events",
    help: "Audit events waiting to be written to the audit datastore.",
    registers,
  });
  const datastoreSwept = new Counter({
    name: "platform_audit_datastore_expired_events_total",
    help: "Audit events deleted from the datastore by the retention sweep (dataStoreTTL).",
    registers,
  });
  return {
    event(level) {
      total++;
      byLevel[level]++;
    },
    dropped(count, plugin = "log") {
      errors.inc({ plugin }, count);
    },
    failure(operation) {
      failures.inc({ operation });
    },
    queuedBytes(bytes) {
      queue.set(bytes);
    },
    datastoreFailure() {
      datastoreFailures.inc();
    },
    datastoreWritten(count) {
      datastoreWritten.inc(count);
    },
    datastoreSpooled(events) {
      datastoreSpooled.set(events);
    },
    datastoreSwept(count) {
      datastoreSwept.inc(count);
    },
  };
}
