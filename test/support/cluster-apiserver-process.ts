// Starts the real stand-alone API server (`virtualcluster apiserver`) as a child process on an ephemeral port with a
// fresh (or given) data directory, and hands tests its URL and admin kubeconfig.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

export interface ClusterApiServerProcess {
  url: string;
  dataDir: string;
  kubeconfig: string;
  caPem: string;
  child: ChildProcess;
  stdout(): string;
  /** What it wrote on stderr (warnings and errors: LOG_LEVEL=warn). */
  stderr(): string;
  /** SIGTERM and wait; resolves with the exit code. Removes the data directory unless it was given. */
  stop(): Promise<number | null>;
}

export async function startClusterApiServerProcess(
  options: { dataDir?: string; extraArgs?: string[] } = {},
): Promise<ClusterApiServerProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "vc-apiserver-")));
  const child = spawn(
    process.execPath,
    [MAIN, "apiserver", "--data-dir", dataDir, "--port", "0", ...(options.extraArgs ?? [])],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LOG_LEVEL: "warn" } },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  let stdout = "";
  const { url, kubeconfig } = await new Promise<{ url: string; kubeconfig: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`apiserver did not start in 90 s:\n${stderr}`)), 90_000);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const listening = /API server listening on (https:\/\/\S+)/.exec(stdout);
      const config = /Admin kubeconfig: (\S+)/.exec(stdout);
      if (listening && config) {
        clearTimeout(timer);
        resolve({ url: listening[1], kubeconfig: config[1] });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`apiserver exited with ${code}:\n${stderr}`));
    });
  });
  const caPem = await readFile(join(dataDir, "pki", "ca.crt"), "utf8");
  return {
    url,
    dataDir,
    kubeconfig,
    caPem,
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      let code = child.exitCode;
      if (code === null) {
        const exited = new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
        child.kill("SIGTERM");
        code = await exited;
      }
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
