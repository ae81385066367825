// Test helper: a throwaway PostgreSQL server (Debian's postgresql package) in a temporary directory on a random
// loopback port, trust authentication, stopped and removed by stop(). Undefined when the binaries are absent, so
// tests can skip with a visible reason. As root (CI), the server runs as the `postgres` user: PostgreSQL refuses root.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface TestPostgres {
  connectionString: string;
  /** Stops the server (fast shutdown); start() brings it back on the same port and data. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export const POSTGRES_MISSING =
  "PostgreSQL is not installed (apt-get install postgresql; .ci/run does this): PostgreSQL tests skipped";

function binDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const dir = join(root, version, "bin");
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  }
  return undefined;
}

export function postgresAvailable(): boolean {
  return binDir() !== undefined;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export async function startTestPostgres(): Promise<TestPostgres | undefined> {
  const bin = binDir();
  if (!bin) return undefined;
  const root = await mkdtemp(join(tmpdir(), "audit-pg-"));
  const data = join(root, "data");
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? Number(spawnSync("id", ["-u", "postgres"]).stdout.toString().trim()) : undefined;
  const gid = asRoot ? Number(spawnSync("id", ["-g", "postgres"]).stdout.toString().trim()) : undefined;
  if (asRoot) await chown(root, uid!, gid!);
  const options = asRoot ? { uid, gid } : {};
  const run = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(join(bin, "pg_ctl"), args, { ...options, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl ${args[0]}: ${stderr}`))));
    });
  const initdb = spawnSync(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"], options);
  if (initdb.status !== 0) throw new Error(`initdb failed: ${initdb.stderr}`);
  const port = await freePort();
  const serverOptions = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const start = () => run(["start", "-D", data, "-w", "-t", "30", "-l", join(root, "log"), "-o", serverOptions]);
  const stopServer = () => run(["stop", "-D", data, "-m", "fast", "-w"]);
  await start();
  const connectionString = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // Fail early with a clear message if the server does not answer.
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.end();
  let running = true;
  return {
    connectionString,
    async pause() {
      if (!running) return;
      await stopServer();
      running = false;
    },
    async resume() {
      if (running) return;
      await start();
      running = true;
    },
    async stop() {
      if (running) await stopServer().catch(() => undefined);
      running = false;
      await rm(root, { recursive: true, force: true });
    },
  };
}
