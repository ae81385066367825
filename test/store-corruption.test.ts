// A damaged store stops `platform start` with one line that names the key or the file, says the store is corrupt
// and how to restore it, and never quotes the stored value; restoring the backup it names brings the platform back.

import assert from "node:assert/strict";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { type CliRun, runCli } from "./support/cli-run.ts";
import { startPlatformProcess } from "./support/platform-process.ts";

const root = mkdtempSync(join(tmpdir(), "vcp-corrupt-"));
after(() => rmSync(root, { recursive: true, force: true }));
const ALICE = "/management.platform.sh/users//alice";

/** `platform start` on a data directory that must not start: exit 1, one line, nothing served. */
async function failedStart(dataDir: string): Promise<string> {
  const run: CliRun = await runCli(["platform", "start", "--data-dir", dataDir, "--port", "0"], {
    env: { ...process.env, LOG_LEVEL: "warn" },
  });
  assert.equal(run.code, 1, `${run.stdout}${run.stderr}`);
  assert.doesNotMatch(run.stdout, /Platform listening/);
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line expected:\n${run.stderr}`);
  return lines[0];
}

const advice = (dataDir: string) =>
  `restore the data directory from a backup: virtualcluster platform restore --from FILE --data-dir ${dataDir} --force`;

describe("a corrupt store", () => {
  it("stops the start naming the key whose value does not decode, and its backup restores the platform", async () => {
    const dataDir = join(root, "value");
    const platform = await startPlatformProcess({ dataDir });
    const client = new AuthClient(platform.url, platform.caPem);
    const alice = {
      apiVersion: "management.platform.sh/v1",
      kind: "User",
      metadata: { name: "alice" },
      spec: { email: "alice@example.com" },
    };
    assert.equal((await client.send("POST", `${API}/users`, { token: platform.adminKey, body: alice })).status, 201);
    client.agent.destroy();
    await platform.stop();
    const backup = join(root, "value-backup.db");
    assert.equal((await runCli(["platform", "backup", "--data-dir", dataDir, "--to", backup])).code, 0);

    // A torn write: the newest version of alice cut off in the middle.
    const db = new DatabaseSync(join(dataDir, "platform.db"));
    const row = db.prepare("SELECT id, value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1").get(ALICE);
    const revision = Number(row?.id);
    db.prepare("UPDATE kv SET value = ? WHERE id = ?").run(String(row?.value).slice(0, 60), revision);
    db.close();

    const line = await failedStart(dataDir);
    assert.equal(
      line,
      `error: the platform's storage ${join(dataDir, "platform.db")} is corrupt: key ${ALICE} (revision ${revision}) does not hold a JSON object; ${advice(dataDir)}`,
    );

    // A restore of the corrupt store itself is refused; the backup brings the platform back.
    const copy = join(root, "corrupt-copy.db");
    assert.equal((await runCli(["platform", "backup", "--data-dir", dataDir, "--to", copy])).code, 0);
    const keyFile = join(dataDir, "pki", "encryption.key");
    const refused = await runCli([
      "platform",
      "restore",
      "--from",
      copy,
      "--data-dir",
      join(root, "elsewhere"),
      "--encryption-key-file",
      keyFile,
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`is corrupt: key ${ALICE} \\(revision ${revision}\\) does not hold`));
    const restore = await runCli(["platform", "restore", "--from", backup, "--data-dir", dataDir, "--force"]);
    assert.equal(restore.code, 0, restore.stderr);
    const restored = await startPlatformProcess({ dataDir });
    try {
      const reader = new AuthClient(restored.url, restored.caPem);
      const read = await reader.send("GET", `${API}/users/alice`, { token: restored.adminKey });
      reader.agent.destroy();
      assert.equal(read.status, 200);
      assert.equal(read.json().spec.email, "alice@example.com");
    } finally {
      await restored.stop();
    }
  });

  it("stops the start naming the file when it is no database, and restore --force replaces it", async () => {
    const dataDir = join(root, "file");
    const platform = await startPlatformProcess({ dataDir });
    await platform.stop();
    const backup = join(root, "file-backup.db");
    assert.equal((await runCli(["platform", "backup", "--data-dir", dataDir, "--to", backup])).code, 0);

    const store = join(dataDir, "platform.db");
    const fd = openSync(store, "r+");
    writeSync(fd, Buffer.alloc(100, 0x41), 0, 100, 0);
    closeSync(fd);

    assert.equal(
      await failedStart(dataDir),
      `error: the platform's storage ${store} is corrupt: file is not a database; ${advice(dataDir)}`,
    );
    const refused = await runCli(["platform", "restore", "--from", backup, "--data-dir", dataDir]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is corrupt: file is not a database: pass --force to replace the damaged store/);
    const restore = await runCli(["platform", "restore", "--from", backup, "--data-dir", dataDir, "--force"]);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stdout, /It replaced a damaged store\./);
    const restored = await startPlatformProcess({ dataDir });
    await restored.stop();
  });
});
