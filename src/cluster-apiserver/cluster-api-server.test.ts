// startClusterApiServer() as an embedding process (a virtual cluster's runtime) sees it: a start that fails at any
// step leaves nothing open, so the same process starts it again on the same data directory.

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type ClusterStartStep, type RunningClusterApiServer, startClusterApiServer } from "./cluster-api-server.ts";

const STEPS: ClusterStartStep[] = ["store", "state", "server"];

describe("startClusterApiServer()", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vc-cluster-start-"));
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("startClusterApiServer() failing at every step in turn undoes itself: each next start serves", async () => {
    for (const failing of STEPS) {
      const fault = new Error(`injected fault before ${failing}`);
      const failed = startClusterApiServer({
        dataDir,
        port: 0,
        testOnlyBeforeStep: (step) => {
          if (step === failing) throw fault;
        },
      });
      await assert.rejects(failed, (error) => error === fault);
      const server = await startClusterApiServer({ dataDir, port: 0 });
      try {
        assert.equal(await readyz(server), "ok", `after a start failed before ${failing}`);
      } finally {
        await server.close();
      }
    }
  });

  it("startClusterApiServer() on a port in use fails, and closes its store: the next start succeeds", async () => {
    const running = await startClusterApiServer({ dataDir: join(dataDir, "first"), port: 0 });
    try {
      await assert.rejects(startClusterApiServer({ dataDir, port: running.port }), /EADDRINUSE|in use/);
      const again = await startClusterApiServer({ dataDir, port: 0 });
      await again.close();
    } finally {
      await running.close();
    }
  });
});

function readyz(server: RunningClusterApiServer): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/readyz`, { ca: server.caPem }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
}
