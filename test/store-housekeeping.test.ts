// Keeping the store small, as an operator sees it over HTTPS and the CLI: a churn of users leaves the store back
// near its size before with no manual step (store-info, /metrics and /readyz show the numbers and the free-disk
// warning), and --store-quota-bytes refuses creates and updates with a 507 that says so while reads and deletes
// keep working, until compaction brings the store back under. The 100,000-object churn that holds the store to 2x
// its live size runs below HTTP, on the store itself (src/platform/store-churn.test.ts).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { StoreInfoReport } from "../src/platform/store-info.ts";
import { API, AuthClient, type Reply } from "./support/auth-client.ts";
import { runCli } from "./support/cli-run.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const USERS = `${API}/users`;
/** Compaction every second keeping one second of history: the churn's history is compactable right after it. */
const QUICK = ["--store-compaction-interval", "1s", "--store-compaction-retention", "1s"];

const user = (name: string, fillerBytes: number) => ({
  apiVersion: "management.platform.sh/v1",
  kind: "User",
  metadata: { name, annotations: { filler: "f".repeat(fillerBytes) } },
  spec: { email: `${name}@e.io` },
});

async function storeInfo(dataDir: string): Promise<StoreInfoReport> {
  const run = await runCli(["platform", "store-info", "--data-dir", dataDir, "-o", "json"]);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as StoreInfoReport;
}

/** Reads until `done`; the limit only ends a wait that will never pass (a loaded machine may need minutes). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Runs `count` calls, `concurrency` at a time, and returns their replies in order. */
async function inParallel(count: number, concurrency: number, call: (i: number) => Promise<Reply>): Promise<Reply[]> {
  const replies: Reply[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      replies[i] = await call(i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return replies;
}

function metric(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return match ? Number(match[1]) : undefined;
}

describe("a platform keeping its store small", () => {
  let platform: PlatformProcess;
  let client: AuthClient;

  before(async () => {
    // A free-disk threshold no disk meets: the warning shows without filling one.
    platform = await startPlatformProcess({ extraArgs: [...QUICK, "--store-free-disk-warning-bytes", "1024Ti"] });
    client = new AuthClient(platform.url, platform.caPem);
  });
  after(async () => {
    client?.agent.destroy();
    await platform?.stop();
  });

  it("returns to about its size before a churn of users, by itself, and says so in store-info, /metrics and /readyz", async () => {
    const sized = (report: StoreInfoReport) => report.info.stats !== undefined && report.info.stats.walBytes === 0;
    const before = (await until(() => storeInfo(platform.dataDir), sized, "the store settles")).info.stats!;

    const count = 400;
    const created = await inParallel(count, 8, (i) =>
      client.send("POST", USERS, { token: platform.adminKey, body: user(`churn-${i}`, 4000) }),
    );
    assert.deepEqual(new Set(created.map((r) => r.status)), new Set([201]));
    const full = (await storeInfo(platform.dataDir)).info.stats!;
    assert.ok(full.inUseBytes > 2 * before.sizeBytes, `the users grew the store: ${full.inUseBytes}`);
    const deleted = await inParallel(count, 8, (i) =>
      client.send("DELETE", `${USERS}/churn-${i}`, { token: platform.adminKey }),
    );
    assert.deepEqual(new Set(deleted.map((r) => r.status)), new Set([200]));

    const settled = await until(
      () => storeInfo(platform.dataDir),
      (r) => r.info.stats!.sizeBytes <= 2 * before.sizeBytes,
      `the store shrinks back to within 2x its ${before.sizeBytes} bytes before`,
    );
    assert.equal(settled.source, "running");
    assert.ok(settled.info.lastCompaction, "a compaction ran");
    assert.ok(settled.info.stats?.lastReclaim && settled.info.stats.lastReclaim.freedBytes > 0, "a vacuum ran");

    const text = await runCli(["platform", "store-info", "--data-dir", platform.dataDir]);
    assert.equal(text.code, 0, text.stderr);
    for (const line of [
      "Store:",
      "(running platform)",
      "Size on disk:",
      "In use:",
      "Free pages:",
      "Last compaction:",
    ]) {
      assert.ok(text.stdout.includes(line), `${line} in:\n${text.stdout}`);
    }
    assert.match(text.stdout, /^Last vacuum: +\S+ \(.* ago\), [\d.]+ s, returned [\d.]+ [KM]iB, longest step/m);
    assert.match(text.stdout, /^Compaction: +every 1s, keeping 1s of history$/m);

    const metrics = (await client.send("GET", "/metrics", { token: platform.adminKey })).body;
    assert.ok((metric(metrics, "apiserver_storage_size_bytes") ?? Infinity) <= 2 * before.sizeBytes, metrics);
    assert.ok((metric(metrics, "apiserver_storage_size_in_use_bytes") ?? 0) > 0);
    assert.ok((metric(metrics, "apiserver_storage_last_compaction_timestamp_seconds") ?? 0) > Date.now() / 1000 - 600);
    assert.ok(metric(metrics, "apiserver_storage_vacuum_duration_seconds") !== undefined);
    assert.equal(metric(metrics, "apiserver_storage_quota_bytes"), 0);
    assert.ok((metric(metrics, "apiserver_storage_data_dir_free_bytes") ?? 0) > 0);
  });

  it("warns in /readyz (verbose line, Warning header) and in its log while free disk is below the threshold", async () => {
    const ready = await client.send("GET", "/readyz?verbose");
    assert.equal(ready.status, 200, "a warning, not a failure: the platform still serves");
    assert.match(
      ready.body,
      /^\[\+\]store-housekeeping ok \(warning: the data directory's file system has .* free \(warning below 1024 TiB\)/m,
    );
    assert.match(String(ready.headers.warning), /^299 - "the data directory's file system has .* free/);
    assert.match(platform.stderr(), /only .* free on the data directory's file system \(warning below 1024 TiB\)/);
    assert.equal(platform.stderr().includes(platform.adminKey), false);
  });
});

describe("a platform with --store-quota-bytes", () => {
  let platform: PlatformProcess;
  let client: AuthClient;

  before(async () => {
    // Info level: the log line saying the quota lifted is one.
    platform = await startPlatformProcess({
      extraArgs: [...QUICK, "--store-quota-bytes", "1Mi"],
      env: { LOG_LEVEL: "info" },
    });
    client = new AuthClient(platform.url, platform.caPem);
  });
  after(async () => {
    client?.agent.destroy();
    await platform?.stop();
  });

  it("refuses creates and updates past the quota with a 507 saying so, keeps reads and deletes, and lifts by itself", async () => {
    const admin = platform.adminKey;
    const names: string[] = [];
    let refused: Reply | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      const reply = await client.send("POST", USERS, { token: admin, body: user(`big-${i}`, 50_000) });
      if (reply.status === 201) names.push(`big-${i}`);
      else refused = reply;
    }
    assert.ok(refused, "the quota was reached");
    assert.equal(refused.status, 507, refused.body);
    const status = refused.json();
    assert.equal(status.kind, "Status");
    assert.equal(status.reason, "InsufficientStorage");
    assert.match(
      status.message,
      /store reached its quota of 1\.0 MiB \(--store-quota-bytes\): creates and updates are refused until compaction brings it back under \(reads and deletes keep working\)/,
    );

    const patch = await client.send("PATCH", `${USERS}/${names[0]}`, {
      token: admin,
      body: { spec: { email: "changed@e.io" } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(patch.status, 507, "updates too");
    assert.equal((await client.send("GET", `${USERS}/${names[0]}`, { token: admin })).status, 200);
    assert.equal((await client.send("GET", USERS, { token: admin })).status, 200);
    const ready = await client.send("GET", "/readyz?verbose");
    assert.equal(ready.status, 200, "every replica is as full: readiness stays, reads and deletes need it");
    assert.match(String(ready.headers.warning), /the store reached its quota/);
    const metrics = (await client.send("GET", "/metrics", { token: admin })).body;
    assert.equal(metric(metrics, "apiserver_storage_quota_reached"), 1);
    assert.equal(metric(metrics, "apiserver_storage_quota_bytes"), 1024 * 1024);

    for (const name of names) {
      assert.equal((await client.send("DELETE", `${USERS}/${name}`, { token: admin })).status, 200, name);
    }
    // No step of ours: compaction drops the deleted users' rows and the quota lifts.
    await until(
      async () => (await client.send("POST", USERS, { token: admin, body: user(`after-${Date.now()}`, 10) })).status,
      (code) => code === 201,
      "creates succeed again",
    );
    assert.match(platform.stderr(), /the store reached its quota \(.* in use of 1\.0 MiB\)/);
    assert.match(platform.stderr(), /the store is back under its quota/);
  });
});
