import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { type TestContext, test } from "node:test";
import type { StatusError } from "../apimachinery/errors.ts";
import type { StoreStats } from "../storage/store-stats.ts";
import { IDLE_REFRESH_MS, StoreMonitor } from "./store-monitor.ts";

const SETTINGS = { compactionIntervalMs: 0, compactionRetentionMs: 0 };
const REFRESH_MS = 250;

/** A monitor over a store of `inUse()` bytes at revision `revision()`, counting its reads, on mocked timers. */
function monitored(
  t: TestContext,
  store: { revision(): number; inUse?(): number },
  options: { changes: boolean; quotaBytes?: number },
) {
  t.mock.timers.enable({ apis: ["setInterval", "Date"] });
  let reads = 0;
  const stats = async (): Promise<StoreStats> => {
    reads++;
    const inUseBytes = store.inUse?.() ?? 4096;
    return {
      backend: "sqlite",
      sizeBytes: inUseBytes,
      inUseBytes,
      freeBytes: 0,
      revision: store.revision(),
      compactedRevision: 0,
    };
  };
  const monitor = new StoreMonitor({
    stats,
    ...(options.changes ? { changes: () => store.revision() } : {}),
    dataDir: tmpdir(),
    quotaBytes: options.quotaBytes,
    refreshMs: REFRESH_MS,
    settings: SETTINGS,
  });
  t.after(() => monitor.close());
  /** Lets `ms` pass, one look at a time, each read it starts finished before the next look. */
  const pass = async (ms: number) => {
    for (let elapsed = 0; elapsed < ms; elapsed += REFRESH_MS) {
      const before = reads;
      t.mock.timers.tick(REFRESH_MS);
      if (reads > before) await monitor.refresh(); // joins the read the look started
    }
  };
  return { monitor, pass, reads: () => reads };
}

test("StoreMonitor reads the sizes of an unchanged store only every IDLE_REFRESH_MS, of a written one at the next look", async (t) => {
  let revision = 7;
  const { monitor, pass, reads } = monitored(t, { revision: () => revision }, { changes: true });
  await monitor.start();
  assert.equal(reads(), 1, "the first read, before any request");
  await pass(IDLE_REFRESH_MS - REFRESH_MS);
  assert.equal(reads(), 1, "idle: nothing to read again yet");
  await pass(REFRESH_MS);
  assert.equal(reads(), 2, "the idle refresh (the disk's free space)");
  revision++;
  await pass(REFRESH_MS);
  assert.equal(reads(), 3, "written: read at the next look");
  assert.equal(monitor.latest?.revision, 8);
});

test("StoreMonitor reads at every look a store that does not say when it changed (etcd)", async (t) => {
  const { monitor, pass, reads } = monitored(t, { revision: () => 7 }, { changes: false });
  await monitor.start();
  await pass(4 * REFRESH_MS);
  assert.equal(reads(), 5);
});

test("StoreMonitor refuses writes past the quota, and allows them once a look finds the store back under it", async (t) => {
  let revision = 1;
  let inUse = 1_000;
  const { monitor, pass } = monitored(
    t,
    { revision: () => revision, inUse: () => inUse },
    { changes: true, quotaBytes: 2_000 },
  );
  await monitor.start();
  monitor.gate();
  inUse = 3_000;
  revision++;
  await pass(REFRESH_MS);
  assert.throws(
    () => monitor.gate(),
    (error: StatusError) => error.status.code === 507,
  );
  inUse = 1_500; // a delete (still allowed) and compaction freed space
  revision++;
  await pass(REFRESH_MS);
  monitor.gate();
});
