// The store's size and housekeeping as Prometheus gauges, read from the StoreMonitor when scraped.
// apiserver_storage_size_bytes is kube-apiserver's name for the database's size on disk; the rest follow it.

import { Gauge, type Registry } from "prom-client";
import type { StoreStats } from "../storage/store-stats.ts";
import type { StoreMonitor } from "./store-monitor.ts";

export function registerStoreMetrics(registry: Registry, monitor: StoreMonitor): void {
  const registers = [registry];
  const gauge = (name: string, help: string, read: (stats: StoreStats) => number | undefined) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const value = monitor.latest && read(monitor.latest);
        if (value !== undefined) this.set(value);
      },
    });
  gauge(
    "apiserver_storage_size_bytes",
    "Size of the store on disk in bytes (SQLite: database and WAL files; etcd: the largest member's database).",
    (s) => s.sizeBytes,
  );
  gauge(
    "apiserver_storage_size_in_use_bytes",
    "Bytes of the store holding data: live objects and history not yet compacted (what --store-quota-bytes limits).",
    (s) => s.inUseBytes,
  );
  gauge(
    "apiserver_storage_free_bytes",
    "Bytes of free pages inside the store's files, reusable by writes; vacuum (SQLite) or defrag (etcd) returns them.",
    (s) => s.freeBytes,
  );
  gauge("apiserver_storage_wal_bytes", "SQLite: size of the write-ahead log file in bytes.", (s) => s.walBytes);
  gauge("apiserver_storage_compacted_revision", "The oldest revision still readable.", (s) => s.compactedRevision);
  gauge(
    "apiserver_storage_vacuum_duration_seconds",
    "SQLite: wall time of the last incremental vacuum run (its steps run between commits).",
    (s) => (s.backend === "sqlite" && s.lastReclaim ? s.lastReclaim.durationMs / 1000 : undefined),
  );
  gauge(
    "apiserver_storage_vacuum_longest_step_seconds",
    "SQLite: the longest step of the last incremental vacuum run (the longest a commit could wait for it).",
    (s) =>
      s.backend === "sqlite" && s.lastReclaim?.longestStepMs !== undefined
        ? s.lastReclaim.longestStepMs / 1000
        : undefined,
  );
  gauge(
    "apiserver_storage_defrag_duration_seconds",
    "etcd: duration of the last member defragmentation this replica ran.",
    (s) => (s.backend === "etcd" && s.lastReclaim ? s.lastReclaim.durationMs / 1000 : undefined),
  );
  new Gauge({
    name: "apiserver_storage_last_compaction_timestamp_seconds",
    help: "When this replica last compacted the store (Unix time).",
    registers,
    collect() {
      if (monitor.lastCompaction) this.set(monitor.lastCompaction.at.getTime() / 1000);
    },
  });
  new Gauge({
    name: "apiserver_storage_compaction_duration_seconds",
    help: "Duration of the last compaction this replica ran (SQLite: including the cleanup of compacted rows).",
    registers,
    collect() {
      if (monitor.lastCompaction) this.set(monitor.lastCompaction.durationMs / 1000);
    },
  });
  new Gauge({
    name: "apiserver_storage_quota_bytes",
    help: "The store quota (--store-quota-bytes); 0 when there is none.",
    registers,
    collect() {
      this.set(monitor.quotaBytes);
    },
  });
  new Gauge({
    name: "apiserver_storage_quota_reached",
    help: "1 while the store is past its quota and creates and updates are refused, else 0.",
    registers,
    collect() {
      this.set(monitor.quotaReached ? 1 : 0);
    },
  });
  new Gauge({
    name: "apiserver_storage_data_dir_free_bytes",
    help: "Free bytes on the file system of the platform's data directory.",
    registers,
    collect() {
      const disk = monitor.diskSpace;
      if (disk) this.set(disk.freeBytes);
    },
  });
}
