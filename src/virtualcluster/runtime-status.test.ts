import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type RuntimeStatus, readRuntimeStatus, runtimeStatusPath, writeRuntimeStatus } from "./runtime-status.ts";

const root = mkdtempSync(join(tmpdir(), "vc-runtime-status-"));
after(() => rmSync(root, { recursive: true, force: true }));

const status: RuntimeStatus = {
  name: "dev",
  namespace: "team-a",
  url: "https://127.0.0.1:9443",
  platform: { connected: false, error: "connecting" },
  syncer: {
    writes: { host: {}, virtual: {} },
    totalWrites: 0,
    queueDepth: 0,
    retrying: 0,
    syncs: 0,
    errors: 0,
    syncErrorEvents: 0,
    notConverging: 0,
    stalled: 0,
    failing: 0,
    synced: true,
  },
};

describe("runtime status file", () => {
  it("writeRuntimeStatus() writes status.json (no temporary file left) that readRuntimeStatus() reads back", async () => {
    const dir = mkdtempSync(join(root, "a-"));
    await writeRuntimeStatus(dir, status);
    assert.deepEqual(readRuntimeStatus(dir), status);
    assert.deepEqual(readdirSync(dir), ["status.json"]);
  });

  it("readRuntimeStatus() is undefined without a file or with a damaged one", () => {
    const dir = mkdtempSync(join(root, "b-"));
    assert.equal(readRuntimeStatus(dir), undefined);
    writeFileSync(runtimeStatusPath(dir), '{"name":');
    assert.equal(readRuntimeStatus(dir), undefined);
  });
});
