// Runs the machine's kubectl against a test server with an isolated discovery cache, so no test reads another
// run's cached API resources.

import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./wait-for.ts";

export const kubectlAvailable = spawnSync("kubectl", ["version", "--client"], { stdio: "ignore" }).status === 0;

/** Reason to pass to `it(..., { skip })` when kubectl is missing: the skip shows up in the test report. */
export const kubectlSkip = kubectlAvailable ? false : "kubectl is not installed on this machine";

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  /** The kubectl to run (default: the one on PATH). */
  binary?: string;
  /** Extra environment, e.g. EDITOR for `kubectl edit`. */
  env?: Record<string, string>;
}

export class Kubectl {
  readonly kubeconfig: string;
  readonly cacheDir = mkdtempSync(join(tmpdir(), "kubectl-cache-"));
  private readonly binary: string;
  private readonly env: NodeJS.ProcessEnv | undefined;

  constructor(kubeconfig: string, options: KubectlOptions = {}) {
    this.kubeconfig = kubeconfig;
    this.binary = options.binary ?? "kubectl";
    this.env = options.env ? { ...process.env, ...options.env } : undefined;
  }

  private args(args: string[]): string[] {
    return ["--kubeconfig", this.kubeconfig, "--cache-dir", this.cacheDir, ...args];
  }

  /** Runs kubectl and resolves with its exit code and output (never rejects on a non-zero exit). */
  run(args: string[], input?: string): Promise<KubectlResult> {
    return new Promise((resolve) => {
      // A bound that only ends a hung kubectl; a loaded machine may take long for a healthy one.
      const options = { timeout: 300_000, env: this.env };
      const child = execFile(this.binary, this.args(args), options, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      });
      if (input !== undefined) child.stdin?.end(input);
    });
  }

  /** Runs kubectl and fails with its stderr when it exits non-zero. */
  async ok(args: string[], input?: string): Promise<string> {
    const result = await this.run(args, input);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed (${result.code}):\n${result.stderr}`);
    return result.stdout;
  }

  /** Starts a long-running kubectl (get -w, wait) and collects its output. */
  start(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number> } {
    const child = spawn(this.binary, this.args(args), { stdio: ["ignore", "pipe", "pipe"], env: this.env });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      out += chunk;
    });
    const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
    return { child, output: () => out, exited };
  }
}

/**
 * Polls until `check` passes (for watchers observing asynchronous output): waitFor's rules, so an error meanwhile
 * (a file not written yet) counts as "not yet", and only a wait that will never pass ends, with the last error.
 */
export async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  await waitFor(async () => await check(), what);
}
