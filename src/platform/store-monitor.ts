// Watches the store's size and the data directory's free disk space, and acts on them: the store quota
// (--store-quota-bytes: writes that add data are refused while the bytes in use are past it, and allowed again as
// soon as compaction brings them back under), warnings in /readyz and the log before the disk fills
// (--store-free-disk-warning-bytes), and the numbers behind the store metrics and `platform store-info`.
// Sizes are read every refreshMs (SQLite: a few PRAGMAs, every 250 ms; etcd: every member's status, every 10 s)
// and right after each compaction, so the quota is as exact as that: a burst can pass it by that long's writes. A
// store that says when its sizes may have changed (`changes`: SQLite's statsVersion, which moves on every write to
// the WAL and every checkpoint) is read only when they may have, and otherwise every IDLE_REFRESH_MS for what
// changes outside it (the disk's free space): an idle platform does not wake to read sizes it already has.

import { statfs } from "node:fs/promises";
import type { Logger } from "pino";
import { errors } from "../apimachinery/errors.ts";
import type { WriteGate } from "../registry/types.ts";
import type { DefragPolicy } from "../storage/etcd/etcd-maintenance.ts";
import type { CompactionRun } from "../storage/retention-compaction.ts";
import type { StoreStats } from "../storage/store-stats.ts";
import { formatBytes } from "../utils/byte-size.ts";

export const DEFAULT_DISK_WARNING_BYTES = 1024 * 1024 * 1024;
/** A warning (not a refusal) once the bytes in use pass this share of the quota. */
const QUOTA_WARNING_SHARE = 0.9;
/** How long a store whose `changes` stays the same goes without its sizes read again. */
export const IDLE_REFRESH_MS = 10_000;

export interface StoreMonitorOptions {
  stats(): Promise<StoreStats>;
  /** A number that moves whenever the sizes may have changed (statsVersion); without it, every look reads them. */
  changes?(): number;
  dataDir: string;
  /** Bytes in use past which writes that add data are refused (0 or absent: no quota). */
  quotaBytes?: number;
  /** Free bytes on the data directory's file system below which /readyz and the log warn (0: never). */
  diskWarningBytes?: number;
  refreshMs: number;
  /** What store-info shows of the housekeeping settings. */
  settings: StoreHousekeepingSettings;
  logger?: Logger;
}

export interface StoreHousekeepingSettings {
  /** 0: automatic compaction is off. */
  compactionIntervalMs: number;
  compactionRetentionMs: number;
  /** etcd only: the defragmentation policy, or "off". */
  defrag?: DefragPolicy | "off";
}

/** What `platform store-info` prints (JSON over the control socket). */
export interface StoreInfo {
  stats?: StoreStats;
  /** Why the sizes could not be read last time. */
  error?: string;
  lastCompaction?: CompactionRun;
  /** The running platform's settings (unknown when read from a stopped platform's file or from etcd). */
  settings?: StoreHousekeepingSettings;
  quota: { bytes: number; reached: boolean };
  disk?: { path: string; freeBytes: number; sizeBytes: number; warningBytes: number; low: boolean };
  warnings: string[];
}

export class StoreMonitor {
  latest?: StoreStats;
  lastCompaction?: CompactionRun;
  private readonly options: StoreMonitorOptions;
  private disk?: { freeBytes: number; sizeBytes: number };
  private error?: string;
  private overQuota = false;
  private diskLow = false;
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  /** `changes` and Date.now() when the sizes were last read. */
  private readAt?: { changes: number | undefined; time: number };
  private closed = false;

  constructor(options: StoreMonitorOptions) {
    this.options = options;
  }

  /** Reads the sizes once (so the quota holds from the first request), then every refreshMs. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => this.look(), this.options.refreshMs);
    this.timer.unref();
  }

  /** Reads sizes and free disk space now (a read under way is joined, not doubled). */
  refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** The periodic look: reads the sizes unless the store is unchanged since they were read, recently. */
  private look(): void {
    const last = this.readAt;
    const unchanged = last?.changes !== undefined && last.changes === this.options.changes?.();
    if (unchanged && Date.now() - last.time < IDLE_REFRESH_MS) return;
    void this.refresh();
  }

  /** A compaction ran: remembered for store-info and metrics, and the sizes are read again (the quota may lift). */
  compacted(run: CompactionRun): void {
    this.lastCompaction = run;
    void this.refresh();
  }

  /** The registry's write gate: the quota's Status while the store is past it. */
  readonly gate: WriteGate = () => {
    if (this.overQuota) throw errors.storeQuotaReached(this.quotaBytes);
  };

  get settings(): StoreHousekeepingSettings {
    return this.options.settings;
  }

  get quotaBytes(): number {
    return this.options.quotaBytes ?? 0;
  }

  get quotaReached(): boolean {
    return this.overQuota;
  }

  /** The data directory's file system: free and total bytes, when read. */
  get diskSpace(): { freeBytes: number; sizeBytes: number } | undefined {
    return this.disk;
  }

  /** Conditions to act on before anything fails (the readyz check "store-housekeeping" passes with them). */
  warnings(): string[] {
    const warnings: string[] = [];
    const threshold = this.diskWarningBytes();
    if (this.diskLow && this.disk) {
      warnings.push(
        `the data directory's file system has ${formatBytes(this.disk.freeBytes)} free (warning below ${formatBytes(threshold)}): free space or grow the volume before writes fail`,
      );
    }
    const quota = this.quotaBytes;
    const inUse = this.latest?.inUseBytes ?? 0;
    if (quota > 0 && this.overQuota) {
      warnings.push(
        `the store reached its quota (${formatBytes(inUse)} in use of ${formatBytes(quota)}): creates and updates are refused until compaction brings it back under`,
      );
    } else if (quota > 0 && inUse >= quota * QUOTA_WARNING_SHARE) {
      warnings.push(`the store uses ${Math.floor((inUse / quota) * 100)}% of its quota (${formatBytes(quota)})`);
    }
    return warnings;
  }

  info(): StoreInfo {
    const threshold = this.diskWarningBytes();
    return {
      ...(this.latest ? { stats: this.latest } : {}),
      ...(this.error ? { error: this.error } : {}),
      ...(this.lastCompaction ? { lastCompaction: this.lastCompaction } : {}),
      settings: this.options.settings,
      quota: { bytes: this.quotaBytes, reached: this.overQuota },
      ...(this.disk
        ? { disk: { path: this.options.dataDir, ...this.disk, warningBytes: threshold, low: this.diskLow } }
        : {}),
      warnings: this.warnings(),
    };
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }

  private diskWarningBytes(): number {
    return this.options.diskWarningBytes ?? DEFAULT_DISK_WARNING_BYTES;
  }

  private async read(): Promise<void> {
    if (this.closed) return;
    const { logger } = this.options;
    this.readAt = { changes: this.options.changes?.(), time: Date.now() };
    try {
      this.latest = await this.options.stats();
      if (this.error) logger?.info("the store's size can be read again");
      this.error = undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message !== this.error) logger?.warn({ err: message }, "cannot read the store's size");
      this.error = message;
    }
    try {
      const fs = await statfs(this.options.dataDir);
      this.disk = { freeBytes: fs.bavail * fs.bsize, sizeBytes: fs.blocks * fs.bsize };
    } catch {
      this.disk = undefined;
    }
    this.judgeQuota();
    this.judgeDisk();
  }

  private judgeQuota(): void {
    const quota = this.quotaBytes;
    const inUse = this.latest?.inUseBytes;
    if (quota <= 0 || inUse === undefined) return;
    const over = inUse > quota;
    if (over === this.overQuota) return;
    this.overQuota = over;
    const fields = { inUseBytes: inUse, quotaBytes: quota };
    if (over) {
      this.options.logger?.warn(
        fields,
        `the store reached its quota (${formatBytes(inUse)} in use of ${formatBytes(quota)}): creates and updates are refused until compaction brings it back under; reads and deletes keep working`,
      );
    } else {
      this.options.logger?.info(fields, `the store is back under its quota (${formatBytes(inUse)} in use)`);
    }
  }

  private judgeDisk(): void {
    const threshold = this.diskWarningBytes();
    if (!this.disk) return;
    const low = threshold > 0 && this.disk.freeBytes < threshold;
    if (low === this.diskLow) return;
    this.diskLow = low;
    const fields = { dataDir: this.options.dataDir, freeBytes: this.disk.freeBytes, warningBytes: threshold };
    if (low) {
      this.options.logger?.warn(
        fields,
        `only ${formatBytes(this.disk.freeBytes)} free on the data directory's file system (warning below ${formatBytes(threshold)}): free space or grow the volume before writes fail`,
      );
    } else {
      this.options.logger?.info(fields, "the data directory's file system has room again");
    }
  }
}
