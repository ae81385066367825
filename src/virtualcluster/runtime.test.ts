// startRuntime() as `virtualcluster run` sees it: a start that fails at any step leaves nothing open (its API
// server's store above all), so the same process starts the virtual cluster again on the same data directory.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningClusterApiServer, startClusterApiServer } from "../cluster-apiserver/cluster-api-server.ts";
import { type KubeAccess, loadKubeAccess } from "./kube/kube-access.ts";
import { type RuntimeStartStep, startRuntime } from "./runtime.ts";

const STEPS: RuntimeStartStep[] = ["api-server", "platform", "syncer", "status"];

describe("startRuntime()", () => {
  let dir: string;
  let hostServer: RunningClusterApiServer;
  let host: KubeAccess;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vc-runtime-start-"));
    hostServer = await startClusterApiServer({ dataDir: join(dir, "host"), port: 0, name: "host" });
    host = await loadKubeAccess({ file: hostServer.kubeconfigPath });
  });
  after(async () => {
    await hostServer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const start = (testOnlyBeforeStep?: (step: RuntimeStartStep) => void) =>
    startRuntime({
      name: "vc",
      namespace: "default",
      settingsText: "",
      host,
      dataDir: join(dir, "vc"),
      port: 0,
      testOnlyBeforeStep,
    });

  it("startRuntime() failing at every step in turn undoes itself: each next start runs and writes its status", async () => {
    for (const failing of STEPS) {
      const fault = new Error(`injected fault before ${failing}`);
      await assert.rejects(
        start((step) => {
          if (step === failing) throw fault;
        }),
        (error) => error === fault,
      );
      const runtime = await start();
      try {
        assert.equal(runtime.status().name, "vc", `after a start failed before ${failing}`);
        const status = JSON.parse(await readFile(join(dir, "vc", "status.json"), "utf8"));
        assert.equal(status.url, runtime.url);
      } finally {
        await runtime.close();
      }
    }
  });
});
