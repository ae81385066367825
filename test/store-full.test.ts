// A full disk, as clients see it over HTTPS: writes answer 507 with a Status saying the store is out of space (never
// a bare 500), reads keep working, /readyz fails its store-space check, and everything recovers once space returns.
// The first test caps the store's pages (SQLite then fails exactly as on a full disk: SQLITE_FULL); the second,
// as root, runs the platform process on a real 16 MiB tmpfs and fills it.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type RunningPlatform, startPlatform } from "../src/platform/platform.ts";
import { API, AuthClient, type Reply } from "./support/auth-client.ts";
import { Kubectl, kubectlSkip } from "./support/kubectl.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

const USERS = `${API}/users`;
const root = mkdtempSync(join(tmpdir(), "vcp-full-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A user whose annotation makes each write need fresh pages. */
const bigUser = (name: string) => ({
  apiVersion: "management.platform.sh/v1",
  kind: "User",
  metadata: { name, annotations: { filler: "f".repeat(60_000) } },
  spec: { email: `${name}@e.io` },
});

/** Creates users until one is refused; returns that reply (or the last success after `max` tries). */
async function writeUntilRefused(client: AuthClient, token: string, prefix: string, max: number): Promise<Reply> {
  let reply: Reply | undefined;
  for (let i = 0; i < max; i++) {
    reply = await client.send("POST", USERS, { token, body: bigUser(`${prefix}-${i}`) });
    if (reply.status !== 201) return reply;
  }
  return reply!;
}

function assertOutOfSpace(reply: Reply, dataDir: string): void {
  assert.equal(reply.status, 507, reply.body);
  const status = reply.json();
  assert.equal(status.kind, "Status");
  assert.equal(status.reason, "InsufficientStorage");
  assert.equal(status.code, 507);
  assert.match(status.message, /store is out of disk space: writes fail until space is freed/);
  assert.equal(reply.body.includes(dataDir), false, "the server's paths stay in its log");
}

describe("a full store", () => {
  it("answers writes with 507, keeps reads, fails /readyz store-space, and recovers when the cap rises", async () => {
    const dataDir = join(root, "capped");
    let cap = 2_000_000_000;
    const platform: RunningPlatform = await startPlatform({
      dataDir,
      host: "127.0.0.1",
      port: 0,
      auth: { scrypt: { N: 1024, r: 8, p: 1 } },
      storePageLimit: () => cap,
    });
    const client = new AuthClient(platform.url, readFileSync(join(dataDir, "pki", "ca.crt"), "utf8"));
    const admin = platform.createdAdminKey!;
    try {
      assert.equal((await client.send("POST", USERS, { token: admin, body: bigUser("before") })).status, 201);
      assert.equal((await client.send("GET", "/readyz")).status, 200);
      cap = 1; // SQLite holds the file at its current size: no page more.

      const refused = await writeUntilRefused(client, admin, "capped", 50);
      assertOutOfSpace(refused, dataDir);
      // Writes outside the registry too: a password login stores a new access key.
      const login = await client.send("POST", "/auth/password/login", {
        body: { username: "admin", password: platform.createdAdminPassword },
      });
      assertOutOfSpace(login, dataDir);

      const read = await client.send("GET", `${USERS}/before`, { token: admin });
      assert.equal(read.status, 200);
      assert.equal((await client.send("GET", USERS, { token: admin })).status, 200);
      const ready = await client.send("GET", "/readyz?verbose");
      assert.equal(ready.status, 500);
      assert.match(ready.body, /^\[-\]store-space failed: reason withheld$/m);
      assert.equal((await client.send("GET", "/livez")).status, 200, "a full disk is no reason to restart");

      cap = 2_000_000_000;
      const again = await client.send("GET", "/readyz?verbose");
      assert.equal(again.status, 200, again.body);
      assert.match(again.body, /^\[\+\]store-space ok$/m);
      assert.equal((await client.send("POST", USERS, { token: admin, body: bigUser("after") })).status, 201);
    } finally {
      client.agent.destroy();
      await platform.close();
    }
  });

  it("is reported by kubectl as out of disk space", { skip: kubectlSkip }, async () => {
    const dataDir = join(root, "kubectl");
    let cap = 2_000_000_000;
    const platform = await startPlatform({
      dataDir,
      host: "127.0.0.1",
      port: 0,
      auth: { scrypt: { N: 1024, r: 8, p: 1 } },
      storePageLimit: () => cap,
    });
    const kubectl = new Kubectl(join(dataDir, "admin.kubeconfig"));
    const client = new AuthClient(platform.url, readFileSync(join(dataDir, "pki", "ca.crt"), "utf8"));
    try {
      cap = 1;
      assertOutOfSpace(await writeUntilRefused(client, platform.createdAdminKey!, "k", 50), dataDir);
      const create = await kubectl.run(["create", "-f", "-"], JSON.stringify(bigUser("from-kubectl")));
      assert.notEqual(create.code, 0);
      assert.match(
        create.stderr,
        /Error from server \(InsufficientStorage\).*the server's store is out of disk space: writes fail until space is freed/,
      );
      const get = await kubectl.run(["get", "users", "admin", "-o", "name"]);
      assert.equal(get.code, 0, get.stderr);
    } finally {
      client.agent.destroy();
      await platform.close();
    }
  });

  it("on a real full file system (tmpfs, as root) answers 507 and recovers once a file is removed", async (t) => {
    const skip = tmpfsUnavailable();
    if (skip) {
      t.skip(skip);
      return;
    }
    const mountpoint = mkdtempSync(join(tmpdir(), "vcp-tmpfs-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", mountpoint]);
    let platform: PlatformProcess | undefined;
    let client: AuthClient | undefined;
    try {
      platform = await startPlatformProcess({ dataDir: join(mountpoint, "data") });
      client = new AuthClient(platform.url, platform.caPem);
      const admin = platform.adminKey;
      assert.equal((await client.send("POST", USERS, { token: admin, body: bigUser("before") })).status, 201);
      const filler = join(mountpoint, "filler");
      fillFileSystem(filler);

      assertOutOfSpace(await writeUntilRefused(client, admin, "tmpfs", 200), platform.dataDir);
      assert.equal((await client.send("GET", `${USERS}/before`, { token: admin })).status, 200);
      assert.match((await client.send("GET", "/readyz?verbose")).body, /^\[-\]store-space failed/m);

      rmSync(filler);
      const ready = await client.send("GET", "/readyz?verbose");
      assert.equal(ready.status, 200, ready.body);
      assert.equal((await client.send("POST", USERS, { token: admin, body: bigUser("after") })).status, 201);
    } finally {
      client?.agent.destroy();
      await platform?.stop();
      spawnSync("umount", ["-l", mountpoint]);
      rmSync(mountpoint, { recursive: true, force: true });
    }
  });
});

/** Why the tmpfs test cannot run here, or undefined when it can. */
function tmpfsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0)
    return "needs root to mount a small tmpfs (CI runs as root); the page-cap test covers the rest";
  const probe = mkdtempSync(join(tmpdir(), "vcp-tmpfs-probe-"));
  try {
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe], { encoding: "utf8" });
    if (mounted.status !== 0) return `mount -t tmpfs is not allowed here: ${mounted.stderr.trim()}`;
    spawnSync("umount", [probe]);
    return undefined;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Writes `file` until the file system has no byte left. */
function fillFileSystem(file: string): void {
  const fd = openSync(file, "w");
  try {
    for (const size of [1024 * 1024, 4096, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}
