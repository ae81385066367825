// Audit metrics, named as kube-apiserver names its own where one exists.

import { Counter, Gauge, type Registry } from "prom-client";
import type { SinkOperation } from "./rotating-file-sink.ts";
import type { AuditLevel } from "./types.ts";

export interface AuditMetrics {
  event(level: AuditLevel): void;
  /** Events that were never written (queue full, sink closed). */
  dropped(count: number): void;
  failure(operation: SinkOperation): void;
  queuedBytes(bytes: number): void;
}

export function createAuditMetrics(registry: Registry): AuditMetrics {
  const registers = [registry];
  const events = new Counter({
    name: "apiserver_audit_event_total",
    help: "Counter of audit events generated and sent to the audit backend.",
    registers,
  });
  const levels = new Counter({
    name: "apiserver_audit_level_total",
    help: "Counter of policy levels for audit events (1 per request).",
    labelNames: ["level"],
    registers,
  });
  const errors = new Counter({
    name: "apiserver_audit_error_total",
    help: "Counter of audit events that failed to be audited properly (dropped, never written).",
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
  // Label children resolved once: inc() on a child skips hashing the labels on every event.
  const byLevel = new Map<AuditLevel, ReturnType<typeof levels.labels>>();
  return {
    event(level) {
      events.inc();
      let child = byLevel.get(level);
      if (!child) {
        child = levels.labels({ level });
        byLevel.set(level, child);
      }
      child.inc();
    },
    dropped(count) {
      errors.inc({ plugin: "log" }, count);
    },
    failure(operation) {
      failures.inc({ operation });
    },
    queuedBytes(bytes) {
      queue.set(bytes);
    },
  };
}
