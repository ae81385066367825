// Test helper: a real etcd cluster (Debian's etcd-server) of 1 or 3 members on loopback, on free ports with
// temporary data directories; members can be killed (SIGKILL) and started again; stop() kills them all.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The etcd binary, or undefined when it is not installed (tests then skip, saying so). */
export function etcdBinary(): string | undefined {
  try {
    return execFileSync("sh", ["-c", "command -v etcd"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** For `test(name, { skip: etcdMissing() }, ...)`: a visible reason when etcd is absent. */
export function etcdMissing(): string | false {
  return etcdBinary() ? false : "etcd is not installed (apt-get install etcd-server; .ci/run installs it)";
}

export interface EtcdMember {
  name: string;
  clientUrl: string;
  readonly running: boolean;
  /** The process id while started (benchmarks count its CPU time). */
  readonly pid: number | undefined;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
  /** Starts the member again on its data directory. */
  start(): Promise<void>;
}

export interface EtcdCluster {
  endpoints: string[];
  members: EtcdMember[];
  /** The member the others follow (asks each running member). */
  leader(): Promise<EtcdMember>;
  stop(): Promise<void>;
  /** SIGKILLs every member and removes the data, synchronously (for a process "exit" handler). */
  stopNow(): void;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function post(
  url: string,
  path: string,
  body: unknown,
  tls?: { ca: string; cert: string; key: string },
): Promise<Record<string, unknown>> {
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const request = (target.protocol === "https:" ? https : http).request(
      target,
      { method: "POST", timeout: 2_000, ...(tls ?? {}) },
      (response) => {
        let text = "";
        response.on("data", (chunk) => {
          text += chunk;
        });
        response.on("end", () => {
          if (response.statusCode !== 200) reject(new Error(`${path}: HTTP ${response.statusCode}`));
          else resolve(JSON.parse(text) as Record<string, unknown>);
        });
      },
    );
    request.on("timeout", () => request.destroy(new Error(`${path}: no answer`)));
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}

export interface EtcdClusterTls {
  /** PEM files of the members' serving certificate and the CA clients' certificates must chain to. */
  certFile: string;
  keyFile: string;
  caFile: string;
  /** A client's credentials (PEM text), for the harness's own readiness checks. */
  client: { ca: string; cert: string; key: string };
}

export async function startEtcdCluster(options: { members?: number; tls?: EtcdClusterTls } = {}): Promise<EtcdCluster> {
  // Ports are picked free and then handed to etcd, so another process on a busy machine may take one in between
  // (the member then never listens): start again on new ports, up to three times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdClusterOnce(options);
    } catch (error) {
      if (attempt === 3 || String(error).includes("not installed")) throw error;
    }
  }
}

async function startEtcdClusterOnce(options: { members?: number; tls?: EtcdClusterTls }): Promise<EtcdCluster> {
  const binary = etcdBinary();
  if (!binary) throw new Error("etcd is not installed");
  const count = options.members ?? 3;
  const dir = mkdtempSync(join(tmpdir(), "etcd-cluster-"));
  const specs: { name: string; client: number; peer: number }[] = [];
  for (let i = 1; i <= count; i++) specs.push({ name: `m${i}`, client: await freePort(), peer: await freePort() });
  const initialCluster = specs.map((s) => `${s.name}=http://127.0.0.1:${s.peer}`).join(",");

  const members = specs.map((spec) => {
    let child: ChildProcess | undefined;
    const clientUrl = `${options.tls ? "https" : "http"}://127.0.0.1:${spec.client}`;
    const tlsArgs = options.tls
      ? [
          "--cert-file",
          options.tls.certFile,
          "--key-file",
          options.tls.keyFile,
          "--trusted-ca-file",
          options.tls.caFile,
          "--client-cert-auth",
        ]
      : [];
    const args = [
      "--name",
      spec.name,
      "--data-dir",
      join(dir, spec.name),
      "--listen-client-urls",
      clientUrl,
      "--advertise-client-urls",
      clientUrl,
      "--listen-peer-urls",
      `http://127.0.0.1:${spec.peer}`,
      "--initial-advertise-peer-urls",
      `http://127.0.0.1:${spec.peer}`,
      "--initial-cluster",
      initialCluster,
      "--initial-cluster-state",
      "new",
      "--initial-cluster-token",
      `test-${process.pid}-${specs[0].client}`,
      "--log-level",
      "error",
      "--logger",
      "zap",
      ...tlsArgs,
    ];
    const member: EtcdMember & { killNow(): void } = {
      name: spec.name,
      clientUrl,
      get running() {
        return child !== undefined && child.exitCode === null && child.signalCode === null;
      },
      get pid() {
        return child?.pid;
      },
      killNow() {
        child?.kill("SIGKILL");
      },
      async kill() {
        const running = child;
        if (!running || running.exitCode !== null || running.signalCode !== null) return;
        const exited = new Promise((resolve) => running.once("exit", resolve));
        running.ref(); // waiting for the exit keeps the process alive
        running.kill("SIGKILL");
        await exited;
      },
      async start() {
        child = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
        // Members never keep a test process alive: stop() or the "exit" handler ends them.
        child.unref();
        (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
        let stderr = "";
        child.stderr?.on("data", (chunk) => {
          stderr = (stderr + chunk).slice(-4000);
        });
        child.once("exit", (code, signal) => {
          if (code !== 0 && signal !== "SIGKILL" && stderr) process.stderr.write(`etcd ${spec.name}: ${stderr}\n`);
        });
      },
    };
    return member;
  });

  const cluster: EtcdCluster = {
    endpoints: members.map((m) => m.clientUrl),
    members,
    async leader() {
      for (const member of members) {
        if (!member.running) continue;
        try {
          const status = await post(member.clientUrl, "/v3/maintenance/status", {}, options.tls?.client);
          const header = status.header as { member_id?: string };
          if (status.leader && status.leader === header.member_id) return member;
        } catch {
          // not answering: ask the next
        }
      }
      throw new Error("no etcd member is the leader");
    },
    async stop() {
      await Promise.all(members.map((m) => m.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
    stopNow() {
      for (const member of members) member.killNow();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(members.map((m) => m.start()));
    await waitForQuorum(cluster.endpoints, 30_000, options.tls?.client);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** Resolves once a linearizable write goes through (the cluster elected a leader). */
export async function waitForQuorum(
  endpoints: string[],
  timeoutMs = 30_000,
  tls?: { ca: string; cert: string; key: string },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    for (const endpoint of endpoints) {
      try {
        await post(endpoint, "/v3/kv/range", { key: Buffer.from("/health").toString("base64") }, tls);
        return;
      } catch (error) {
        last = error;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`etcd did not elect a leader in time: ${String(last)}`);
}

let shared: Promise<EtcdCluster> | undefined;
let sharedPrefixes = 0;

/**
 * VCP_TEST_STORE=etcd runs the registry's and the platform's tests on etcd instead of SQLite: one 3-member cluster
 * per test process, started on first use and killed when the process exits; each caller gets a fresh prefix, or
 * the one of `name` (a platform restarted on the same data directory finds its store again).
 * Undefined when the variable is not set.
 */
export async function testEtcdFromEnv(name?: string): Promise<{ endpoints: string[]; prefix: string } | undefined> {
  if (process.env.VCP_TEST_STORE !== "etcd") return undefined;
  shared ??= startEtcdCluster({ members: 3 }).then((cluster) => {
    process.once("exit", () => cluster.stopNow());
    return cluster;
  });
  const cluster = await shared;
  return { endpoints: cluster.endpoints, prefix: `/test-${name ?? `${process.pid}-${++sharedPrefixes}`}` };
}
