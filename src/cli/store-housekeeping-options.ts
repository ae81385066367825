// `platform start`'s flags for keeping the store small: compaction interval and retention, the store quota (as
// etcd's --quota-backend-bytes), the free-disk warning, and etcd defragmentation.

import { type Command, InvalidArgumentError } from "commander";
import type { StoreHousekeepingOptions } from "../platform/store-housekeeping.ts";
import { parseByteSize } from "../utils/byte-size.ts";
import { parseDuration } from "./duration.ts";

export interface StoreHousekeepingFlags {
  storeCompactionInterval?: number;
  storeCompactionRetention?: number;
  storeQuotaBytes?: number;
  storeFreeDiskWarningBytes?: number;
  /** false with --no-etcd-defrag. */
  etcdDefrag?: boolean;
  etcdDefragFreePercent?: number;
  etcdDefragMinFreeBytes?: number;
}

/** Seconds of a duration, or 0 for "0" (off). */
function durationOrOff(value: string): number {
  return value.trim() === "0" ? 0 : parseDuration(value);
}

function bytes(value: string): number {
  const parsed = parseByteSize(value);
  if (parsed === undefined) throw new InvalidArgumentError("must be a size in bytes, e.g. 1073741824, 512Mi or 8Gi");
  return parsed;
}

function percent(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 99) throw new InvalidArgumentError("must be a whole percentage, 1 to 99");
  return n;
}

export function addStoreHousekeepingOptions(command: Command): Command {
  return command
    .option(
      "--store-compaction-interval <duration>",
      "how often old revisions are compacted, e.g. 1m (default 1m; 0: never)",
      durationOrOff,
    )
    .option(
      "--store-compaction-retention <duration>",
      "how long revisions stay readable for watches and paged lists to resume from (default 5m)",
      parseDuration,
    )
    .option(
      "--store-quota-bytes <bytes>",
      "refuse creates and updates while the store's data passes this size, e.g. 8Gi (default: no quota)",
      bytes,
    )
    .option(
      "--store-free-disk-warning-bytes <bytes>",
      "warn in /readyz and the log when the data directory's file system has less free (default 1Gi; 0: never)",
      bytes,
    )
    .option("--no-etcd-defrag", "with --store etcd: never defragment etcd members (leave it to the operator)")
    .option(
      "--etcd-defrag-free-percent <percent>",
      "with --store etcd: defragment a member once this share of its database file is free (default 25)",
      percent,
    )
    .option(
      "--etcd-defrag-min-free-bytes <bytes>",
      "with --store etcd: ... and at least this many bytes are free (default 16Mi)",
      bytes,
    );
}

/** The options the flags select; an error message for etcd flags without --store etcd. */
export function storeHousekeepingOptions(flags: StoreHousekeepingFlags, etcd: boolean): StoreHousekeepingOptions {
  const defragFlags = flags.etcdDefrag === false || flags.etcdDefragFreePercent !== undefined;
  if (!etcd && (defragFlags || flags.etcdDefragMinFreeBytes !== undefined)) {
    throw new Error("--no-etcd-defrag, --etcd-defrag-free-percent and --etcd-defrag-min-free-bytes need --store etcd");
  }
  const defrag =
    flags.etcdDefrag === false
      ? false
      : {
          ...(flags.etcdDefragFreePercent !== undefined ? { freeShare: flags.etcdDefragFreePercent / 100 } : {}),
          ...(flags.etcdDefragMinFreeBytes !== undefined ? { minFreeBytes: flags.etcdDefragMinFreeBytes } : {}),
        };
  return {
    ...(flags.storeCompactionInterval !== undefined
      ? { compactionIntervalMs: flags.storeCompactionInterval * 1000 }
      : {}),
    ...(flags.storeCompactionRetention !== undefined
      ? { compactionRetentionMs: flags.storeCompactionRetention * 1000 }
      : {}),
    ...(flags.storeQuotaBytes !== undefined ? { quotaBytes: flags.storeQuotaBytes } : {}),
    ...(flags.storeFreeDiskWarningBytes !== undefined ? { diskWarningBytes: flags.storeFreeDiskWarningBytes } : {}),
    ...(etcd ? { etcdDefrag: defrag } : {}),
  };
}
