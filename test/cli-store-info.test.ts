// `virtualcluster platform store-info` on a stopped platform's data directory (read from the file), its --vacuum,
// and on etcd (every member asked). The running platform's answer is in test/store-housekeeping.test.ts.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, test } from "node:test";
import type { StoreInfoReport } from "../src/platform/store-info.ts";
import { etcdMissing, startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { openSqliteStore } from "../src/storage/sqlite/sqlite-store.ts";
import { assertCliFailure, type CliRun, runCli } from "./support/cli-run.ts";
import { waitFor } from "./support/wait-for.ts";

const root = mkdtempSync(join(tmpdir(), "cli-store-info-"));
after(() => rmSync(root, { recursive: true, force: true }));

async function dataDirWithStore(name: string, keys: number): Promise<string> {
  const dataDir = join(root, name);
  mkdirSync(dataDir, { mode: 0o700 });
  const store = await openSqliteStore({ path: join(dataDir, "platform.db") });
  await Promise.all(Array.from({ length: keys }, (_, i) => store.create(`/k/${i}`, "v".repeat(1000))));
  await Promise.all(Array.from({ length: keys / 2 }, (_, i) => store.delete(`/k/${i}`)));
  await store.close();
  return dataDir;
}

test("platform store-info reads a stopped platform's store file", async () => {
  const dataDir = await dataDirWithStore("stopped", 200);
  const text = await runCli(["platform", "store-info", "--data-dir", dataDir]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Store: +SQLite, .*platform\.db \(platform stopped\)$/m);
  assert.match(text.stdout, /^Revision: +300 \(readable from 0\)$/m);
  assert.match(text.stdout, /^Auto-vacuum: +incremental$/m);
  assert.match(text.stdout, /^Free disk: +\S+ \S+ of /m);
  const json = JSON.parse((await runCli(["platform", "store-info", "--data-dir", dataDir, "-o", "json"])).stdout);
  const report = json as StoreInfoReport;
  assert.equal(report.source, "stopped");
  assert.ok(report.info.stats!.inUseBytes > 200 * 1000, "the history of the 200 keys is still there");

  assertCliFailure(
    await runCli(["platform", "store-info", "--data-dir", join(root, "nothing")]),
    /there is no platform store in .*nothing \(no platform\.db\)/,
  );
});

test("platform store-info --vacuum rebuilds a stopped platform's file (converting an old one), and refuses a served one", async () => {
  const dataDir = await dataDirWithStore("old", 100);
  const path = join(dataDir, "platform.db");
  // As an older version made it: no auto-vacuum.
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = DELETE; PRAGMA auto_vacuum = NONE; VACUUM");
  db.close();
  assert.match((await runCli(["platform", "store-info", "--data-dir", dataDir])).stdout, /^Auto-vacuum: +none/m);

  const served = await openSqliteStore({ path });
  try {
    assertCliFailure(
      await runCli(["platform", "store-info", "--data-dir", dataDir, "--vacuum"]),
      /a platform is running on .*: stop it first/,
    );
  } finally {
    await served.close();
  }
  const vacuum = await runCli(["platform", "store-info", "--data-dir", dataDir, "--vacuum"]);
  assert.equal(vacuum.code, 0, vacuum.stderr);
  assert.match(vacuum.stdout, /^Vacuumed .*platform\.db in [\d.]+ s: \S+ \S+ -> \S+ \S+\.$/m);
  assert.match(
    (await runCli(["platform", "store-info", "--data-dir", dataDir])).stdout,
    /^Auto-vacuum: +incremental$/m,
  );
  const reopened = await openSqliteStore({ path });
  assert.equal(await reopened.count("/k/"), 50, "every key is still there");
  await reopened.close();
});

test("platform store-info --store etcd asks every member", { skip: etcdMissing() }, async () => {
  const cluster = await startEtcdCluster({ members: 3 });
  try {
    const args = ["platform", "store-info", "--store", "etcd", "--etcd-endpoints", cluster.endpoints.join(",")];
    // A member just started may not answer yet (it says so: "does not answer"); the cluster settles first.
    let text: CliRun | undefined;
    await waitFor(async () => {
      text = await runCli(args);
      return !/does not answer/.test(text.stdout);
    }, "every etcd member answering");
    assert.ok(text);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Store: +etcd, prefix \/virtualcluster-platform$/m);
    assert.equal(text.stdout.match(/^Member [0-9a-f]+: +http:\/\/127\.0\.0\.1:\d+: \S+ \S+, in use /gm)?.length, 3);
    assert.equal(text.stdout.match(/\(leader\)$/gm)?.length, 1);
    const report = JSON.parse((await runCli([...args, "-o", "json"])).stdout) as StoreInfoReport;
    assert.equal(report.source, "etcd");
    assert.equal(report.info.stats?.members?.length, 3);
    assertCliFailure(await runCli([...args, "--vacuum"]), /--vacuum is for the embedded store/);
  } finally {
    await cluster.stop();
  }
});
