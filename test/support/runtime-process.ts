// Starts a real virtual cluster (`virtualcluster run`) as a child process on an ephemeral port and hands tests its
// URL, admin kubeconfig and the status it writes to <data-dir>/status.json.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RuntimeStatus, readRuntimeStatus, STATUS_FILE } from "../../src/virtualcluster/runtime-status.ts";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

export interface RuntimeProcess {
  url: string;
  dataDir: string;
  kubeconfig: string;
  child: ChildProcess;
  status(): Promise<RuntimeStatus>;
  stderr(): string;
  stop(): Promise<void>;
}

export interface RuntimeProcessOptions {
  name: string;
  namespace: string;
  settings: string;
  hostKubeconfig: string;
  env?: NodeJS.ProcessEnv;
  /** --heartbeat-seconds (default 1); null: none, the runtime follows the platform's heartbeat. */
  heartbeatSeconds?: number | null;
  /** A data directory to (re)use, e.g. to restart a runtime with its state; kept on stop. Default: a fresh one. */
  dataDir?: string;
}

export async function startRuntimeProcess(options: RuntimeProcessOptions): Promise<RuntimeProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), `vc-${options.name}-`)));
  await mkdir(dataDir, { recursive: true });
  const settingsFile = join(dataDir, "virtualcluster.yaml");
  await writeFile(settingsFile, options.settings);
  const args = [
    MAIN,
    "run",
    "--name",
    options.name,
    "-n",
    options.namespace,
    "-f",
    settingsFile,
    "--host-kubeconfig",
    options.hostKubeconfig,
    "--data-dir",
    dataDir,
    ...(options.heartbeatSeconds === null ? [] : ["--heartbeat-seconds", String(options.heartbeatSeconds ?? 1)]),
  ];
  // LICENSE would win over every Secret: only the test's own choice may set it.
  const env: NodeJS.ProcessEnv = { ...process.env, LICENSE: undefined, LOG_LEVEL: "info", ...options.env };
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  let stdout = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`virtual cluster did not start in 90 s:\n${stderr}`)), 90_000);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const match = /listening on (https:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`virtual cluster exited with ${code}:\n${stderr}`));
    });
  });
  return {
    url,
    dataDir,
    kubeconfig: join(dataDir, "admin.kubeconfig"),
    child,
    async status() {
      const status = readRuntimeStatus(dataDir);
      if (!status) throw new Error(`no readable ${STATUS_FILE} in ${dataDir}`);
      return status;
    },
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
