// startPlatform() as a process embedding it sees it: a start that fails half way leaves nothing open behind it, so
// the same process can start the platform again on the same data directory.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningPlatform, startPlatform } from "./platform.ts";

const CHEAP_SCRYPT = { N: 1024, r: 8, p: 1 };

describe("startPlatform()", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-start-"));
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const start = (extra: Partial<Parameters<typeof startPlatform>[0]> = {}) =>
    startPlatform({ dataDir, host: "127.0.0.1", port: 0, auth: { scrypt: CHEAP_SCRYPT }, ...extra });

  it("startPlatform() that fails after the store opens closes it: the next start in the process succeeds", async () => {
    // A --config file that cannot be read fails the start once the store is open and the kinds are registered.
    await assert.rejects(start({ configFile: join(dataDir, "no-such-config.yaml") }), /no-such-config/);
    const platform: RunningPlatform = await start();
    await platform.close();
  });

  it("startPlatform() starts the modules in the order docs/architecture.md lists them", async () => {
    const started: string[] = [];
    const platform = await start({ testOnlyBeforeStart: (name) => void started.push(name) });
    await platform.close();
    const map = await readFile(join(import.meta.dirname, "..", "..", "docs", "architecture.md"), "utf8");
    const section = map.slice(map.indexOf("## Modules and their lifecycle"), map.indexOf("## A request, in order"));
    const listed = [...section.matchAll(/^\| [^|]+ \| `([\w-]+)-module\.ts`/gm)].map((match) => match[1]);
    assert.deepEqual(listed, started);
  });

  it("startPlatform() failing at every module in turn undoes itself: each next start succeeds and serves", async () => {
    const modules: string[] = [];
    const first = await start({ testOnlyBeforeStart: (name) => void modules.push(name) });
    await first.close();
    assert.equal(modules[0], "store");
    assert.ok(modules.includes("identity") && modules.includes("api-server"), modules.join(", "));
    for (const failing of modules) {
      const fault = new Error(`injected fault before ${failing}`);
      const failed = start({
        testOnlyBeforeStart: (name) => {
          if (name === failing) throw fault;
        },
      });
      await assert.rejects(failed, (error) => error === fault);
      const platform = await start();
      try {
        const health = await fetchHealth(platform);
        assert.equal(health, "ok", `after a start failed before ${failing}`);
      } finally {
        await platform.close();
      }
    }
  });
});

/** /readyz of the running platform, trusting its own CA. */
async function fetchHealth(platform: RunningPlatform): Promise<string> {
  const caPem = await readFile(join(platform.dataDir, "pki", "ca.crt"), "utf8");
  return new Promise((resolve, reject) => {
    const req = request(`${platform.url}/readyz`, { ca: caPem }, (res) => {
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
