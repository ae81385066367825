// `virtualcluster platform backup` and `restore` against the real platform: a snapshot taken while writers keep
// writing over HTTPS, restored into a new data directory and served by a new platform, must be exactly the
// platform's state at the snapshot's revision: every write acknowledged at or before it, none after.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, describe, it } from "node:test";
import { API, AuthClient } from "./support/auth-client.ts";
import { assertCliFailure as assertFailure, type CliRun, runCli } from "./support/cli-run.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const root = mkdtempSync(join(tmpdir(), "vcp-backup-"));
const GV = "management.platform.sh/v1";
const USERS = `${API}/users`;

/** One acknowledged write: the user's name, the revision the platform answered, and the display name written. */
interface Ack {
  name: string;
  revision: number;
  displayName: string;
}

function assertOk(run: CliRun): void {
  assert.equal(run.code, 0, `${run.stdout}${run.stderr}`);
}

/** Creates users and updates them until stopped, recording every acknowledged write. */
function writeLoad(platform: PlatformProcess, loops: number) {
  const client = new AuthClient(platform.url, platform.caPem);
  const acks: Ack[] = [];
  let stopped = false;
  const write = async (method: string, path: string, body: unknown, contentType?: string) => {
    const reply = await client.send(method, path, { token: platform.adminKey, body, contentType });
    assert.ok(reply.status === 200 || reply.status === 201, `${method} ${path}: ${reply.status} ${reply.body}`);
    return Number(reply.json().metadata.resourceVersion);
  };
  const running = Array.from({ length: loops }, async (_, loop) => {
    for (let i = 0; !stopped; i++) {
      const name = `load-${loop}-${i}`;
      const body = {
        apiVersion: GV,
        kind: "User",
        metadata: { name },
        spec: { displayName: "v1", email: `${name}@e.io` },
      };
      acks.push({ name, revision: await write("POST", USERS, body), displayName: "v1" });
      const patch = { spec: { displayName: "v2" } };
      const revision = await write("PATCH", `${USERS}/${name}`, patch, "application/merge-patch+json");
      acks.push({ name, revision, displayName: "v2" });
    }
  });
  return {
    acks,
    count: () => acks.length,
    async stop() {
      stopped = true;
      await Promise.all(running);
      client.agent.destroy();
    },
  };
}

/** The newest live value of every key of a snapshot file, by key. */
function snapshotObjects(file: string, prefix: string): Map<string, { revision: number; value: string }> {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const rows = db
      .prepare(
        `SELECT k.name AS name, k.id AS id, k.value AS value
         FROM (SELECT name, MAX(id) AS mid, deleted FROM kv GROUP BY name) AS m JOIN kv AS k ON k.id = m.mid
         WHERE m.deleted = 0 AND k.name >= ? AND k.name < ?`,
      )
      .all(prefix, `${prefix}\uffff`);
    return new Map(rows.map((row) => [String(row.name), { revision: Number(row.id), value: String(row.value) }]));
  } finally {
    db.close();
  }
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("platform backup and restore", () => {
  const started: PlatformProcess[] = [];
  after(async () => {
    for (const platform of started) await platform.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("a backup taken under write load restores into a platform that serves exactly the snapshot's revision", async () => {
    const source = await startPlatformProcess({ dataDir: join(root, "source") });
    started.push(source);
    const snapshot = join(root, "snapshot.db");
    const load = writeLoad(source, 6);
    let backup: CliRun;
    let revisionBefore: number;
    try {
      await until(() => load.count() >= 60);
      revisionBefore = Math.max(...load.acks.map((ack) => ack.revision));
      backup = await runCli(["platform", "backup", "--data-dir", source.dataDir, "--to", snapshot]);
      const countAtBackup = load.count();
      await until(() => load.count() >= countAtBackup + 60);

      // While it serves: a second backup to the same file is refused, and no restore touches its store.
      assertFailure(
        await runCli(["platform", "backup", "--data-dir", source.dataDir, "--to", snapshot]),
        /already exists: pass --force to replace it/,
      );
      assertFailure(
        await runCli(["platform", "restore", "--from", snapshot, "--data-dir", source.dataDir, "--force"]),
        /a platform is running on .*: stop it before restoring/,
      );
    } finally {
      await load.stop();
    }
    assertOk(backup);
    const printed = /Snapshot at revision (\d+) \((\d+) keys\) written to (.+) \(taken by the running platform\)/.exec(
      backup.stdout,
    );
    assert.ok(printed, backup.stdout);
    const revision = Number(printed[1]);
    assert.equal(printed[3], snapshot);
    assert.ok(revision > revisionBefore, "the snapshot was taken while the writers ran");
    assert.ok(
      load.acks.some((ack) => ack.revision > revision),
      "writes went on after the snapshot",
    );
    assert.equal(statSync(snapshot).mode & 0o777, 0o600);
    assert.deepEqual(
      new Set(readdirSync(root)),
      new Set(["source", "snapshot.db"]),
      "no temporary file is left beside the snapshot",
    );
    assert.match(backup.stdout, /sealed under encryption key k[0-9a-f]{12}: restore refuses it if it changes/);
    await source.stop();

    // A stopped platform's store is read directly.
    const offline = await runCli(["platform", "backup", "--data-dir", source.dataDir, "--to", join(root, "cold.db")]);
    assertOk(offline);
    assert.match(offline.stdout, /\(read from the stopped platform's store\)/);
    assertFailure(
      await runCli(["platform", "restore", "--from", snapshot, "--data-dir", source.dataDir]),
      /already holds a store \(\d+ keys at revision \d+\): pass --force to replace it/,
    );
    assertFailure(
      await runCli(["platform", "restore", "--from", snapshot, "--data-dir", join(root, "keyless")]),
      /cannot check the authentication of .*snapshot\.db: it was sealed under encryption key k[0-9a-f]{12}, and .*keyless\/pki\/encryption\.key does not exist; copy pki\/encryption\.key of the data directory it was taken from, or pass the key file with --encryption-key-file/,
    );

    const target = join(root, "restored");
    // A new data directory, the encryption key given beside it: the seal is checked with it.
    const keyFile = join(source.dataDir, "pki", "encryption.key");
    const restore = await runCli([
      "platform",
      "restore",
      "--from",
      snapshot,
      "--data-dir",
      target,
      "--encryption-key-file",
      keyFile,
    ]);
    assertOk(restore);
    assert.match(restore.stdout, new RegExp(`Restored revision ${revision} \\(${printed[2]} keys\\)`));
    assert.match(restore.stdout, /Its seal \(encryption key k[0-9a-f]{12}\) matched\./);
    // The store holds no CA or admin key file: restore says what to copy.
    assert.match(restore.stderr, /warning: .*pki has no ca\.key/);
    assert.match(restore.stderr, /warning: .*admin-access-key is missing/);
    assert.equal(statSync(join(target, "platform.db")).mode & 0o777, 0o600);
    assert.equal(statSync(target).mode & 0o777, 0o700);
    cpSync(join(source.dataDir, "pki"), join(target, "pki"), { recursive: true });
    chmodSync(join(target, "pki"), 0o700);
    cpSync(join(source.dataDir, "admin-access-key"), join(target, "admin-access-key"));

    const restored = await startPlatformProcess({ dataDir: target });
    started.push(restored);
    const client = new AuthClient(restored.url, restored.caPem);
    try {
      // Every write acknowledged at or before the revision is there (its newest version), none after it.
      const expected = new Map<string, Ack>();
      for (const ack of load.acks) {
        if (ack.revision <= revision && (expected.get(ack.name)?.revision ?? 0) < ack.revision) {
          expected.set(ack.name, ack);
        }
      }
      const list = await client.send("GET", USERS, { token: restored.adminKey });
      assert.equal(list.status, 200);
      assert.ok(Number(list.json().metadata.resourceVersion) >= revision);
      const served = new Map<string, { revision: number; displayName: string }>();
      for (const user of list.json().items) {
        if (!user.metadata.name.startsWith("load-")) continue;
        served.set(user.metadata.name, {
          revision: Number(user.metadata.resourceVersion),
          displayName: user.spec.displayName,
        });
      }
      assert.deepEqual(
        served,
        new Map([...expected].map(([name, ack]) => [name, { revision: ack.revision, displayName: ack.displayName }])),
      );

      // Every object of the snapshot file is served as stored.
      const stored = snapshotObjects(snapshot, "/management.platform.sh/users//");
      assert.ok(stored.size >= expected.size);
      for (const [key, { revision: objectRevision, value }] of stored) {
        const name = key.slice(key.lastIndexOf("/") + 1);
        const reply = await client.send("GET", `${USERS}/${name}`, { token: restored.adminKey });
        assert.equal(reply.status, 200, reply.body);
        const object = JSON.parse(value);
        object.metadata.resourceVersion = String(objectRevision);
        assert.deepEqual(reply.json(), object, key);
      }
    } finally {
      client.agent.destroy();
    }
    assert.equal(existsSync(join(target, "platform.sock")), true, "the restored platform answers backups too");
  });

  it("a backup whose rows were edited (bob made admin) is refused at restore, naming the check that failed", async () => {
    const source = await startPlatformProcess({ dataDir: join(root, "tamper-source") });
    started.push(source);
    const client = new AuthClient(source.url, source.caPem);
    await client.createUser(source.adminKey, "bob");
    client.agent.destroy();
    const backup = join(root, "tamper.db");
    assertOk(await runCli(["platform", "backup", "--data-dir", source.dataDir, "--to", backup]));
    await source.stop();
    const keyFile = join(source.dataDir, "pki", "encryption.key");
    const restore = (from: string, target: string, ...extra: string[]) =>
      runCli([
        "platform",
        "restore",
        "--from",
        from,
        "--data-dir",
        join(root, target),
        "--encryption-key-file",
        keyFile,
        ...extra,
      ]);

    const edited = join(root, "tamper-edited.db");
    cpSync(backup, edited);
    const db = new DatabaseSync(edited);
    const bob = db
      .prepare("SELECT id, value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1")
      .get(`/${GV.split("/")[0]}/users//bob`);
    assert.ok(bob, "bob is in the backup");
    const value = JSON.parse(String(bob.value));
    value.spec = { ...value.spec, clusterRoles: [{ name: "admin" }] };
    db.prepare("UPDATE kv SET value = ? WHERE id = ?").run(JSON.stringify(value), bob.id);
    db.close();
    assertFailure(
      await restore(edited, "tamper-edited"),
      /backup authentication failed: the contents of .*tamper-edited\.db do not match its HMAC-SHA256 under encryption key k[0-9a-f]{12}, so it was changed after it was made; restore refused/,
    );
    assert.equal(existsSync(join(root, "tamper-edited", "platform.db")), false, "nothing restored");

    // Without its seal it is an unauthenticated backup: refused unless asked for, and then said so.
    const unsealed = join(root, "tamper-unsealed.db");
    cpSync(edited, unsealed);
    const plain = new DatabaseSync(unsealed);
    plain.exec("DROP TABLE snapshot_seal");
    plain.close();
    assertFailure(
      await restore(unsealed, "tamper-unsealed"),
      /backup authentication failed: .*tamper-unsealed\.db carries no authentication \(a backup of a version before authenticated backups, or a copied platform\.db\); take a new backup with virtualcluster platform backup, or pass --allow-unauthenticated/,
    );
    const allowed = await restore(unsealed, "tamper-unsealed", "--allow-unauthenticated");
    assertOk(allowed);
    assert.match(
      allowed.stderr,
      /warning: .*carries no authentication .*: restored unchecked \(--allow-unauthenticated\)/,
    );

    // Under another key the seal cannot be checked; the untouched backup restores.
    const otherKey = join(root, "other.key");
    writeFileSync(otherKey, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    assertFailure(
      await runCli([
        "platform",
        "restore",
        "--from",
        backup,
        "--data-dir",
        join(root, "tamper-other"),
        "--encryption-key-file",
        otherKey,
      ]),
      /it was sealed under encryption key (k[0-9a-f]{12}), which .*other\.key does not hold \(it holds k[0-9a-f]{12}\)/,
    );
    assertOk(await restore(backup, "tamper-intact"));
  });
});
