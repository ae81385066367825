// Keeping the platform's store small and its size visible: the StoreMonitor (quota, free-disk warning, sizes for
// metrics and store-info), and on the leader the compaction task and, on etcd, the defragmentation task. The
// SQLite store returns the pages compaction frees by itself (src/storage/sqlite/vacuum.ts).

import type { Logger } from "pino";
import type { Registry as MetricsRegistry } from "prom-client";
import type { EtcdTls } from "../storage/etcd/etcd-client.ts";
import { EtcdCompactionTurn } from "../storage/etcd/etcd-compaction-turn.ts";
import { DEFAULT_DEFRAG_POLICY, type DefragPolicy, EtcdMaintenance } from "../storage/etcd/etcd-maintenance.ts";
import type { EtcdStore } from "../storage/etcd/etcd-store.ts";
import type { ReclaimRun, StoreStats } from "../storage/store-stats.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { compactionTask, DEFAULT_COMPACTION_INTERVAL_MS, DEFAULT_COMPACTION_RETENTION_MS } from "./compaction-task.ts";
import { DEFAULT_DEFRAG_INTERVAL_MS, defragTask } from "./defrag-task.ts";
import type { Leadership } from "./leader.ts";
import { registerStoreMetrics } from "./store-metrics.ts";
import { StoreMonitor } from "./store-monitor.ts";

/** `platform start`'s store flags (see src/cli/store-housekeeping-options.ts); every field has a default. */
export interface StoreHousekeepingOptions {
  /** --store-compaction-interval (default 1 minute; 0 turns automatic compaction off). */
  compactionIntervalMs?: number;
  /** --store-compaction-retention: history kept readable (default 5 minutes). */
  compactionRetentionMs?: number;
  /** --store-quota-bytes (0 or absent: none). */
  quotaBytes?: number;
  /** --store-free-disk-warning-bytes (default 1 GiB; 0: never). */
  diskWarningBytes?: number;
  /** etcd: --etcd-defrag-free-percent and --etcd-defrag-min-free-bytes (over the defaults), or false for --no-etcd-defrag. */
  etcdDefrag?: Partial<DefragPolicy> | false;
  /** How often the sizes are read (default 250 ms on SQLite, 10 s on etcd). */
  refreshMs?: number;
  /** etcd: how often the leader looks for a member to defragment (default 1 minute). */
  defragIntervalMs?: number;
}

export interface StoreHousekeepingParts {
  storage: KeyValueStore;
  /** The etcd store and how to reach each member (for sizes and defragmentation); absent on SQLite. */
  /** requestTimeoutMs: the maintenance calls' budget (default 5 s; tests on a loaded machine give more). */
  etcd?: { store: EtcdStore; endpoints: string[]; tls?: EtcdTls; requestTimeoutMs?: number };
  dataDir: string;
  metrics: MetricsRegistry;
  options?: StoreHousekeepingOptions;
  logger?: Logger;
}

export class StoreHousekeeping {
  readonly monitor: StoreMonitor;
  private readonly parts: StoreHousekeepingParts;
  private readonly maintenance?: EtcdMaintenance;

  private constructor(parts: StoreHousekeepingParts, monitor: StoreMonitor, maintenance?: EtcdMaintenance) {
    this.parts = parts;
    this.monitor = monitor;
    this.maintenance = maintenance;
  }

  /** Starts the monitor (its first reading is done when this resolves: the quota holds from the first request). */
  static async start(parts: StoreHousekeepingParts): Promise<StoreHousekeeping> {
    const options = parts.options ?? {};
    const { etcd, storage } = parts;
    const maintenance =
      etcd &&
      new EtcdMaintenance({ endpoints: etcd.endpoints, tls: etcd.tls, requestTimeoutMs: etcd.requestTimeoutMs });
    const stats = async (): Promise<StoreStats> => {
      if (!maintenance) {
        if (!storage.stats) throw new Error("this store does not report its size");
        return storage.stats();
      }
      const [revision, compactedRevision] = await Promise.all([storage.currentRevision(), storage.compactedRevision()]);
      return maintenance.stats({ revision, compactedRevision });
    };
    const monitor = new StoreMonitor({
      stats,
      ...(!maintenance && storage.statsVersion ? { changes: () => storage.statsVersion?.() ?? 0 } : {}),
      dataDir: parts.dataDir,
      quotaBytes: options.quotaBytes,
      diskWarningBytes: options.diskWarningBytes,
      refreshMs: options.refreshMs ?? (etcd ? 10_000 : 250),
      settings: {
        compactionIntervalMs: options.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS,
        compactionRetentionMs: options.compactionRetentionMs ?? DEFAULT_COMPACTION_RETENTION_MS,
        ...(etcd
          ? { defrag: options.etcdDefrag === false ? "off" : { ...DEFAULT_DEFRAG_POLICY, ...options.etcdDefrag } }
          : {}),
      },
      logger: parts.logger,
    });
    await monitor.start();
    registerStoreMetrics(parts.metrics, monitor);
    return new StoreHousekeeping(parts, monitor, maintenance);
  }

  /**
   * Runs compaction (and on etcd defragmentation) while `leadership` leads. `mayDefragment` holds
   * defragmentation back (outside the maintenance window); compaction is incremental and always runs.
   */
  runOn(leadership: Pick<Leadership, "run">, mayDefragment?: () => boolean): void {
    const { storage, etcd, logger } = this.parts;
    const { settings } = this.monitor;
    if (settings.compactionIntervalMs > 0) {
      leadership.run(() => {
        const turn = etcd && new EtcdCompactionTurn({ client: etcd.store.client, keys: etcd.store.keys });
        return compactionTask({
          storage,
          intervalMs: settings.compactionIntervalMs,
          retentionMs: settings.compactionRetentionMs,
          takeTurn: turn && ((target) => turn.take(target)),
          onCompacted: (run) => this.monitor.compacted(run),
          logger,
        });
      });
    }
    const { maintenance } = this;
    const policy = settings.defrag;
    if (maintenance && policy && policy !== "off") {
      leadership.run(() =>
        defragTask({
          maintenance,
          policy,
          intervalMs: this.parts.options?.defragIntervalMs ?? DEFAULT_DEFRAG_INTERVAL_MS,
          onDefragmented: () => void this.monitor.refresh(),
          mayRun: mayDefragment,
          logger,
        }),
      );
    }
  }

  /** etcd: the member defragmentations this replica ran, oldest first (the last 20). */
  get defragRuns(): readonly ReclaimRun[] {
    return this.maintenance?.runs ?? [];
  }

  /** The readyz check "store-housekeeping": passes, with the monitor's warnings (low disk, quota). */
  readonly healthCheck = (): string | undefined => {
    const warnings = this.monitor.warnings();
    return warnings.length > 0 ? warnings.join("; ") : undefined;
  };

  async close(): Promise<void> {
    this.monitor.close();
    await this.maintenance?.close();
  }
}
