// The platform process as an operator sees it: first start, files and their modes, restart on the same data
// directory, open and protected endpoints, and a clean shutdown that ends watches.

import assert from "node:assert/strict";
import { chmod, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { request } from "node:https";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { PLATFORM_NODE_FLAGS } from "../src/cli/platform-memory.ts";
import { type PlatformProcess, startPlatformProcess } from "./support/platform-process.ts";

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(platform: PlatformProcess, path: string, token?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${platform.url}${path}`,
      { ca: platform.caPem, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe("platform lifecycle", () => {
  let dataDir: string;
  let platform: PlatformProcess;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-lifecycle-"));
    platform = await startPlatformProcess({ dataDir });
  });
  after(async () => {
    await platform?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("first start prints the admin key once and keeps secrets in owner-only files", async () => {
    assert.match(platform.stdout(), /access key is shown only this once/);
    assert.ok(platform.stdout().includes(platform.adminKey));
    assert.equal(await mode(join(dataDir, "admin-access-key")), 0o600);
    assert.equal(await mode(join(dataDir, "admin.kubeconfig")), 0o600);
    assert.equal(await mode(join(dataDir, "pki", "ca.key")), 0o600);
    assert.equal(await mode(join(dataDir, "pki", "serving.key")), 0o600);
    assert.equal(await mode(dataDir), 0o700);
    // Everything else too, the store's own files (database, WAL, shared memory) and the certificates included.
    for (const folder of [dataDir, join(dataDir, "pki")]) {
      for (const name of await readdir(folder)) {
        const path = join(folder, name);
        assert.equal((await mode(path)) & 0o077, 0, `${path} is open to group or others`);
      }
    }
    assert.ok((await readdir(dataDir)).includes("platform.db-wal"), "the WAL is among the files checked");
  });

  it("runs as the process that was started, with the platform's V8 flags and malloc settings", async () => {
    const pid = platform.child.pid as number;
    const commandLine = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
    for (const flag of PLATFORM_NODE_FLAGS) assert.ok(commandLine.includes(flag), commandLine.join(" "));
    const environment = (await readFile(`/proc/${pid}/environ`, "utf8")).split("\0");
    assert.ok(environment.some((entry) => /^GLIBC_TUNABLES=.*glibc\.malloc\.arena_max=1/.test(entry)));
  });

  it("serves health and version without credentials, and the API only with them", async () => {
    for (const path of ["/healthz", "/livez", "/readyz"]) {
      const reply = await get(platform, path);
      assert.equal(reply.status, 200, path);
      assert.equal(reply.body, "ok");
    }
    const version = JSON.parse((await get(platform, "/version")).body);
    assert.equal(version.major, "1");
    assert.equal(version.minor, "32");
    const anonymous = await get(platform, "/apis/management.platform.sh/v1/users");
    assert.equal(anonymous.status, 401);
    assert.equal(JSON.parse(anonymous.body).kind, "Status");
    const users = await get(platform, "/kubernetes/management/apis/management.platform.sh/v1/users", platform.adminKey);
    assert.equal(users.status, 200);
    assert.equal(JSON.parse(users.body).kind, "UserList");
  });

  it("exposes request and storage metrics", async () => {
    const metrics = await get(platform, "/metrics", platform.adminKey);
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /apiserver_request_total\{[^}]*resource="users"/);
    assert.match(
      metrics.body,
      /apiserver_storage_operations_total\{operation="list",resource="users.management.platform.sh"/,
    );
  });

  it("SIGTERM ends open watches cleanly and exits 0; a restart keeps the data and prints no new key", async () => {
    const watchEnded = new Promise<string>((resolve, reject) => {
      const req = request(
        `${platform.url}/apis/management.platform.sh/v1/users?watch=true`,
        { ca: platform.caPem, headers: { authorization: `Bearer ${platform.adminKey}` } },
        (res) => {
          let body = "";
          res.on("data", (chunk) => {
            body += chunk;
            // Once the initial ADDED event arrived the watch is established: stop the server.
            if (body.includes('"ADDED"') && platform.child.exitCode === null) platform.child.kill("SIGTERM");
          });
          res.on("end", () => resolve(body));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end();
    });
    const exited = new Promise<number | null>((resolve) => platform.child.once("exit", (code) => resolve(code)));
    const body = await watchEnded;
    assert.match(body, /"name":"admin"/);
    assert.equal(await exited, 0);

    platform = await startPlatformProcess({ dataDir });
    assert.doesNotMatch(platform.stdout(), /shown only this once/);
    const admin = await get(platform, "/apis/management.platform.sh/v1/users/admin", platform.adminKey);
    assert.equal(admin.status, 200);
  });
});

describe("platform data directory permissions", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-perms-"));
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("refuses a data directory group or others may read, in one line with the fix, before writing anything", async () => {
    await chmod(dataDir, 0o755);
    await assert.rejects(startPlatformProcess({ dataDir }), (error: Error) => {
      const line = `${dataDir} can be read or written by group or others (mode 0755)`;
      assert.ok(error.message.includes(line), error.message);
      assert.ok(error.message.includes(`chmod -R go-rwx ${dataDir}`), error.message);
      assert.ok(error.message.includes("--allow-insecure-permissions"), error.message);
      assert.doesNotMatch(error.message, /\n\s+at /, "no stack trace");
      return true;
    });
    assert.deepEqual(await readdir(dataDir), [], "nothing was written");
  });

  it("starts with --allow-insecure-permissions, and refuses a store file opened up later", async () => {
    const platform = await startPlatformProcess({ dataDir, extraArgs: ["--allow-insecure-permissions"] });
    await platform.stop();
    await chmod(dataDir, 0o700);
    await chmod(join(dataDir, "platform.db"), 0o644);
    await assert.rejects(startPlatformProcess({ dataDir }), /platform\.db can be read or written by group or others/);
    await chmod(join(dataDir, "platform.db"), 0o600);
    const again = await startPlatformProcess({ dataDir });
    await again.stop();
  });
});

describe("platform start on a port already in use", () => {
  let dataDir: string;
  let blocker: Server;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vcp-port-"));
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  });
  after(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  it("refuses before writing anything, suggests --port, and the next start still shows the admin key once", async () => {
    const port = String((blocker.address() as AddressInfo).port);
    await assert.rejects(startPlatformProcess({ dataDir, extraArgs: ["--port", port] }), (error: Error) => {
      assert.ok(error.message.includes(`127.0.0.1:${port} is already in use`), error.message);
      assert.ok(error.message.includes("--port"), error.message);
      return true;
    });
    assert.deepEqual(await readdir(dataDir), [], "no credentials, store or certificates were written");
    // Every other precondition too: a serving certificate that cannot be read.
    const missing = join(dataDir, "..", "no-such-cert.pem");
    await assert.rejects(
      startPlatformProcess({ dataDir, extraArgs: ["--tls-cert", missing, "--tls-key", missing] }),
      /--tls-cert .*no-such-cert\.pem: cannot read the file \(ENOENT\)/,
    );
    assert.deepEqual(await readdir(dataDir), [], "nothing written before the certificate failed");
    const platform = await startPlatformProcess({ dataDir });
    try {
      assert.match(platform.stdout(), /access key is shown only this once/);
    } finally {
      await platform.stop();
    }
  });
});
