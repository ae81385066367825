import assert from "node:assert/strict";
import { test } from "node:test";
import { Command } from "commander";
import {
  addStoreHousekeepingOptions,
  type StoreHousekeepingFlags,
  storeHousekeepingOptions,
} from "./store-housekeeping-options.ts";

function parse(args: string[]): StoreHousekeepingFlags {
  const command = addStoreHousekeepingOptions(
    new Command("start").exitOverride().configureOutput({ writeErr: () => {} }),
  );
  command.parse(args, { from: "user" });
  return command.opts<StoreHousekeepingFlags>();
}

test("storeHousekeepingOptions() leaves every default to the platform when no flag is given", () => {
  assert.deepEqual(storeHousekeepingOptions(parse([]), false), {});
  assert.deepEqual(storeHousekeepingOptions(parse([]), true), { etcdDefrag: {} });
});

test("storeHousekeepingOptions() reads durations, sizes with suffixes, and 0 as off", () => {
  const flags = parse([
    "--store-compaction-interval",
    "30s",
    "--store-compaction-retention",
    "1h",
    "--store-quota-bytes",
    "8Gi",
    "--store-free-disk-warning-bytes",
    "0",
  ]);
  assert.deepEqual(storeHousekeepingOptions(flags, false), {
    compactionIntervalMs: 30_000,
    compactionRetentionMs: 3_600_000,
    quotaBytes: 8 * 1024 ** 3,
    diskWarningBytes: 0,
  });
  assert.equal(storeHousekeepingOptions(parse(["--store-compaction-interval", "0"]), false).compactionIntervalMs, 0);
});

test("storeHousekeepingOptions() takes the etcd defragmentation flags with --store etcd only", () => {
  const tuned = parse(["--etcd-defrag-free-percent", "30", "--etcd-defrag-min-free-bytes", "64Mi"]);
  assert.deepEqual(storeHousekeepingOptions(tuned, true).etcdDefrag, { freeShare: 0.3, minFreeBytes: 64 * 1024 ** 2 });
  assert.equal(storeHousekeepingOptions(parse(["--no-etcd-defrag"]), true).etcdDefrag, false);
  assert.throws(() => storeHousekeepingOptions(tuned, false), /need --store etcd/);
  assert.throws(() => storeHousekeepingOptions(parse(["--no-etcd-defrag"]), false), /need --store etcd/);
});

test("addStoreHousekeepingOptions() refuses malformed values, saying what they should be", () => {
  assert.throws(
    () => parse(["--store-quota-bytes", "8GB"]),
    /must be a size in bytes, e\.g\. 1073741824, 512Mi or 8Gi/,
  );
  assert.throws(() => parse(["--store-compaction-retention", "0s"]), /is zero/);
  assert.throws(() => parse(["--store-compaction-interval", "soon"]), /is not a duration/);
  assert.throws(() => parse(["--etcd-defrag-free-percent", "100"]), /whole percentage, 1 to 99/);
});
