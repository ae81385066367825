// Test and benchmark support: churning a store (creating and deleting many objects in waves) while recording its
// size, and the size the live objects alone take in a fresh store of the same kind, to compare against.

import { Registry as MetricsRegistry } from "prom-client";
import { toBase64 } from "../storage/etcd/etcd-client.ts";
import { DEFAULT_DEFRAG_POLICY } from "../storage/etcd/etcd-maintenance.ts";
import type { EtcdStore } from "../storage/etcd/etcd-store.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { etcdLeadership, soleLeadership } from "./leader.ts";
import { StoreHousekeeping } from "./store-housekeeping.ts";

/** One point of the size curve: after `operations` creates and deletes. */
export interface SizePoint {
  operations: number;
  sizeBytes: number;
  inUseBytes: number;
}

/** Writes and deletes of a batch of keys; the store's own create and delete unless a faster path is given. */
export interface ChurnWriter {
  create(keys: string[], value: string): Promise<void>;
  delete(keys: string[]): Promise<void>;
}

export interface ChurnOptions {
  /** Objects created and deleted in all. */
  total: number;
  /** Objects created, then deleted, per wave. */
  wave: number;
  /** Batches in flight at once. */
  concurrency: number;
  /** Keys per batch. */
  batch: number;
  prefix: string;
  value: string;
  writer: ChurnWriter;
  /** Read after every wave for the curve. */
  size(): Promise<{ sizeBytes: number; inUseBytes: number }>;
}

/** A stored object of about `bytes` bytes, shaped like the platform's (JSON with metadata). */
export function sampleValue(bytes: number): string {
  const base = { apiVersion: "management.platform.sh/v1", kind: "User", metadata: { name: "churn" }, spec: {} };
  const filler = Math.max(0, bytes - JSON.stringify(base).length - 40);
  return JSON.stringify({ ...base, metadata: { ...base.metadata, annotations: { filler: "x".repeat(filler) } } });
}

/** The store's own create and delete, one call per key. */
export function storeWriter(store: KeyValueStore): ChurnWriter {
  return {
    async create(keys, value) {
      await Promise.all(keys.map((key) => store.create(key, value)));
    },
    async delete(keys) {
      await Promise.all(keys.map((key) => store.delete(key)));
    },
  };
}

/** Puts and deletes as etcd transactions of many keys (the store's keys, under its prefix): the fast bulk path. */
export function etcdTransactionWriter(store: EtcdStore): ChurnWriter {
  const txn = async (ops: unknown[]) => {
    await store.client.call("/v3/kv/txn", { success: ops });
  };
  return {
    create: (keys, value) =>
      txn(keys.map((key) => ({ request_put: { key: toBase64(store.keys.key(key)), value: toBase64(value) } }))),
    delete: (keys) => txn(keys.map((key) => ({ request_delete_range: { key: toBase64(store.keys.key(key)) } }))),
  };
}

/**
 * The platform's housekeeping as the churn test runs it: compaction every 200 ms keeping 200 ms (so a wave's
 * history is compactable within the next), sizes read every 200 ms, and on etcd defragmentation of members past the
 * default share (a quarter free) and 1 MiB (the default 16 MiB would leave the test's small store alone), looked for
 * every 500 ms. `stop()` ends the leadership and the housekeeping (not the store).
 */
export async function quickHousekeeping(parts: {
  storage: KeyValueStore;
  etcd?: { store: EtcdStore; endpoints: string[] };
  dataDir: string;
}): Promise<{ housekeeping: StoreHousekeeping; stop(): Promise<void> }> {
  const housekeeping = await StoreHousekeeping.start({
    ...parts,
    // What is tested is the store's size, not etcd's answer time on a loaded machine.
    etcd: parts.etcd && { ...parts.etcd, requestTimeoutMs: 90_000 },
    metrics: new MetricsRegistry(),
    options: {
      compactionIntervalMs: 200,
      compactionRetentionMs: 200,
      refreshMs: 200,
      etcdDefrag: { freeShare: DEFAULT_DEFRAG_POLICY.freeShare, minFreeBytes: 1024 * 1024 },
      defragIntervalMs: 500,
    },
  });
  const leadership = parts.etcd
    ? etcdLeadership({ store: parts.etcd.store, identity: "churn", ttlSeconds: 5 })
    : soleLeadership();
  housekeeping.runOn(leadership);
  return {
    housekeeping,
    async stop() {
      await leadership.stop();
      await housekeeping.close();
    },
  };
}

/** Creates `count` live objects `/live/<i>` through the store's own create. */
export async function createLive(store: KeyValueStore, count: number, value: string): Promise<void> {
  await storeWriter(store).create(
    Array.from({ length: count }, (_, i) => `/live/${i}`),
    value,
  );
}

/** Creates and deletes `total` objects in waves, and returns the size after each wave (the first point is before). */
export async function churn(options: ChurnOptions): Promise<SizePoint[]> {
  const curve: SizePoint[] = [{ operations: 0, ...(await options.size()) }];
  for (let start = 0; start < options.total; start += options.wave) {
    const names = Array.from({ length: Math.min(options.wave, options.total - start) }, (_, i) => start + i);
    await inBatches(options, names, (keys) => options.writer.create(keys, options.value));
    await inBatches(options, names, (keys) => options.writer.delete(keys));
    curve.push({ operations: 2 * (start + names.length), ...(await options.size()) });
  }
  return curve;
}

async function inBatches(options: ChurnOptions, names: number[], run: (keys: string[]) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const slice = names.slice(next, next + options.batch);
      next += slice.length;
      await run(slice.map((name) => `${options.prefix}${name}`));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
}

/**
 * Polls `read` until `done` holds or `timeoutMs` passes, and returns the last value read. A read that fails (a member
 * busy defragmenting, a loaded machine) is tried again; only the last one's error is thrown, at the deadline.
 */
export async function readUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await read();
      if (done(value) || Date.now() > deadline) return value;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The curve as a Markdown table (for BENCHMARKS.md and test diagnostics). */
export function curveTable(curve: SizePoint[]): string {
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);
  const rows = curve.map(
    (p) => `| ${p.operations.toLocaleString("en")} | ${mib(p.sizeBytes)} | ${mib(p.inUseBytes)} |`,
  );
  return ["| creates + deletes | size on disk (MiB) | in use (MiB) |", "|---|---|---|", ...rows].join("\n");
}
