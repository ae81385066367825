// The syncer's counters as Prometheus series on the virtual cluster's /metrics, read from stats() when scraped.

import { Counter, Gauge, type Registry } from "../../http/prometheus.ts";
import type { SyncerStats } from "./stats.ts";

/** Registers the syncer's series on `registry`; `stats` is read at every scrape. */
export function registerSyncerMetrics(registry: Registry, stats: () => SyncerStats | undefined): void {
  const counter = (name: string, help: string, read: (s: SyncerStats) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const current = stats();
        this.reset();
        if (current) this.inc(read(current));
      },
    });
  const gauge = (name: string, help: string, read: (s: SyncerStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const current = stats();
        if (current) this.set(read(current));
      },
    });
  counter("virtualcluster_syncer_syncs_total", "Keys synced, with or without a write.", (s) => s.syncs);
  counter("virtualcluster_syncer_errors_total", "Failed syncs (each retried with backoff).", (s) => s.errors);
  counter(
    "virtualcluster_syncer_not_converging_total",
    "Objects stopped because their sync kept rewriting its own result (a patch that does not converge).",
    (s) => s.notConverging,
  );
  counter(
    "virtualcluster_syncer_sync_error_events_total",
    "SyncError events recorded or bumped.",
    (s) => s.syncErrorEvents,
  );
  gauge("virtualcluster_syncer_stalled_objects", "Objects currently stopped as not converging.", (s) => s.stalled);
  gauge("virtualcluster_syncer_queue_depth", "Keys queued or being synced.", (s) => s.queueDepth);
  new Counter({
    name: "virtualcluster_syncer_writes_total",
    help: "Successful writes by side (host or virtual), kind and verb.",
    labelNames: ["side", "kind", "verb"],
    registers: [registry],
    collect() {
      const current = stats();
      this.reset();
      for (const [side, kinds] of Object.entries(current?.writes ?? {})) {
        for (const [kind, verbs] of Object.entries(kinds)) {
          for (const [verb, count] of Object.entries(verbs)) this.inc({ side, kind, verb }, count);
        }
      }
    },
  });
}
