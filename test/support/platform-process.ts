// Starts the real platform (`virtualcluster platform start`) as a child process on an ephemeral port with a
// fresh data directory, and hands tests its URL, admin key and admin kubeconfig.

import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { testEtcdFromEnv } from "../../src/storage/etcd/testing-etcd-cluster.ts";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

/** VCP_TEST_STORE=etcd: the platform stores on a real etcd (fresh prefix) with an encryption key file made for it. */
async function etcdArgsFromEnv(dataDir: string): Promise<string[]> {
  const etcd = await testEtcdFromEnv(createHash("sha256").update(dataDir).digest("hex").slice(0, 16));
  if (!etcd) return [];
  const keyFile = join(dataDir, "pki", "encryption.key");
  await mkdir(join(dataDir, "pki"), { recursive: true, mode: 0o700 });
  await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" }).catch(() => {});
  return ["--store", "etcd", "--etcd-endpoints", etcd.endpoints.join(","), "--etcd-prefix", etcd.prefix];
}

export interface PlatformProcess {
  url: string;
  apiRoot: string;
  dataDir: string;
  adminKey: string;
  kubeconfig: string;
  caPem: string;
  child: ChildProcess;
  /** Everything the process printed on stdout so far. */
  stdout(): string;
  /** Everything it logged on stderr so far. */
  stderr(): string;
  stop(): Promise<void>;
}

export async function startPlatformProcess(
  options: {
    dataDir?: string;
    extraArgs?: string[];
    env?: Record<string, string>;
    /** Another tree's src/cli/main.ts (A/B benchmarks). */
    main?: string;
    /**
     * Runs the platform in a session of its own (setsid): where the kernel shares the CPU between sessions first
     * (autogroups), benchmarks can then give it a share of its own. The caller must stop it (it outlives a parent
     * that dies without doing so).
     */
    ownSession?: boolean;
  } = {},
): Promise<PlatformProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "vcp-test-")));
  const storeArgs = options.extraArgs?.includes("--store") ? [] : await etcdArgsFromEnv(dataDir);
  const child = spawn(
    process.execPath,
    [
      options.main ?? MAIN,
      "platform",
      "start",
      "--data-dir",
      dataDir,
      "--port",
      "0",
      ...storeArgs,
      ...(options.extraArgs ?? []),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LOG_LEVEL: "warn", ...options.env },
      detached: options.ownSession === true,
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  let stdout = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`platform did not start in 90 s:\n${stderr}`)), 90_000);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const match = /Platform listening on (https:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`platform exited with ${code}:\n${stderr}`));
    });
  });
  // Replicas on one etcd: only the one that made the admin has its key file.
  const adminKey = (await readFile(join(dataDir, "admin-access-key"), "utf8").catch(() => "")).trim();
  const caPem = await readFile(join(dataDir, "pki", "ca.crt"), "utf8");
  return {
    url,
    apiRoot: `${url}/kubernetes/management/apis/management.platform.sh/v1`,
    dataDir,
    adminKey,
    kubeconfig: join(dataDir, "admin.kubeconfig"),
    caPem,
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts a platform that must refuse to start: resolves to what it printed on stderr, which must be one line, after
 * it exited with 1. A platform that starts is stopped and fails the test.
 */
export async function refusedStart(options: Parameters<typeof startPlatformProcess>[0]): Promise<string> {
  const outcome = await startPlatformProcess(options).then(
    async (running) => {
      await running.stop();
      return "the platform started";
    },
    (error: Error) => error.message,
  );
  const stderr = /exited with 1:\n([\s\S]*)$/.exec(outcome)?.[1]?.trimEnd();
  if (stderr === undefined || stderr.includes("\n")) throw new Error(`not refused in one line: ${outcome}`);
  return stderr;
}
