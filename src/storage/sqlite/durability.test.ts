import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { openSqliteStore } from "./sqlite-store.ts";

const dir = mkdtempSync(join(tmpdir(), "sqlite-durability-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const writer = join(import.meta.dirname, "durability-writer.ts");

/** Runs the writer until it acknowledged `acks` keys, kills it with SIGKILL, and returns every acknowledged key. */
async function ackedBeforeKill(path: string, synchronous: string, acks: number): Promise<string[]> {
  const child = spawn(process.execPath, [writer, path, synchronous], { stdio: ["ignore", "pipe", "inherit"] });
  const acked: string[] = [];
  let partial = "";
  let killed = false;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("/")) acked.push(line);
    if (!killed && acked.length >= acks) {
      killed = true;
      child.kill("SIGKILL");
    }
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on("close", (c, s) => resolve([c, s])),
  );
  assert.equal(signal, "SIGKILL", `the writer should have been killed, it exited with ${code}`);
  return acked;
}

for (const synchronous of ["FULL", "NORMAL", "FULL-thread-pool"] as const) {
  test(`SqliteStore keeps every acknowledged write when the process is killed (${synchronous})`, async () => {
    const path = join(dir, `kill-${synchronous}.db`);
    const acked = await ackedBeforeKill(path, synchronous, 2000);
    assert.ok(acked.length >= 2000);
    const store = await openSqliteStore({ path });
    try {
      const missing: string[] = [];
      for (const key of acked) if (!(await store.get(key))) missing.push(key);
      assert.deepEqual(missing, [], "every acknowledged key survives");
      const revision = await store.currentRevision();
      assert.ok(revision >= acked.length);
      assert.equal(await store.count("/durable/"), revision, "the reopened log is consistent");
      const next = await store.create("/durable/after-restart", "v");
      assert.equal(next.revision, revision + 1);
    } finally {
      await store.close();
    }
  });
}
