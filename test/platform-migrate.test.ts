// `virtualcluster platform migrate`: a stopped embedded platform copied into etcd serves on with the same admin key,
// password, objects and secrets; a prefix that holds keys is refused unless --force.

import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type EtcdCluster, etcdMissing, startEtcdCluster } from "../src/storage/etcd/testing-etcd-cluster.ts";
import { API } from "./support/auth-client.ts";
import { assertCliFailure, runCli } from "./support/cli-run.ts";
import { send } from "./support/https-json.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

describe("virtualcluster platform migrate", { skip: etcdMissing() }, () => {
  let cluster: EtcdCluster;
  let embedded: PlatformProcess;
  let dataDir = "";

  before(async () => {
    cluster = await startEtcdCluster({ members: 1 });
    embedded = await startPlatformProcess();
    dataDir = embedded.dataDir;
  });

  after(async () => {
    await cluster?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("platform migrate copies a stopped embedded platform into etcd, where it serves on unchanged", async () => {
    const team = await send(embedded, "POST", `${API}/teams`, {
      token: embedded.adminKey,
      body: { apiVersion: "management.platform.sh/v1", kind: "Team", metadata: { name: "kept" }, spec: {} },
    });
    assert.equal(team.status, 201, team.body);
    const uid = team.json().metadata.uid;
    const password = (await readFile(join(dataDir, "admin-password"), "utf8")).trim();
    const adminKey = embedded.adminKey;
    // Stopping keeps the data directory (the test owns it through dataDir).
    embedded.child.kill("SIGTERM");
    await new Promise((resolve) => embedded.child.once("exit", resolve));

    const etcdArgs = ["--to-etcd", cluster.endpoints.join(","), "--etcd-prefix", "/migrated"];
    const migrated = await runCli(["platform", "migrate", "--from-data-dir", dataDir, ...etcdArgs]);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /Copied \d+ keys .* to etcd prefix \/migrated/);

    const replica = await startPlatformProcess({
      dataDir,
      extraArgs: ["--store", "etcd", "--etcd-endpoints", cluster.endpoints.join(","), "--etcd-prefix", "/migrated"],
    });
    try {
      assert.doesNotMatch(replica.stdout(), /Created user/, "the admin came along: no new one");
      const read = await send(replica, "GET", `${API}/teams/kept`, { token: adminKey });
      assert.equal(read.status, 200, read.body);
      assert.equal(read.json().metadata.uid, uid);
      const login = await send(replica, "POST", "/auth/password/login", { body: { username: "admin", password } });
      assert.equal(login.status, 200, `the password hash (sealed) opens on etcd: ${login.body}`);

      const again = await runCli(["platform", "migrate", "--from-data-dir", dataDir, ...etcdArgs]);
      assertCliFailure(again, /the etcd prefix \/migrated already holds \d+ keys.*--force/);
    } finally {
      await replica.stop();
    }
    const forced = await runCli(["platform", "migrate", "--from-data-dir", dataDir, ...etcdArgs, "--force"]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /after deleting the \d+ keys it held/);
  });
});
