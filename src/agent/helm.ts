// The `helm` the agent installs apps with: `--helm-binary FILE`, else `helm` on PATH. Each run gets its own Helm
// homes (config, cache, data) under the release's folder and an environment without the agent's own variables
// that name other kubeconfigs or Helm settings, so nothing of one release reaches another. Output is bounded.

import { execFile } from "node:child_process";

const VERSION_TIMEOUT_MS = 10_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export interface HelmBinary {
  path: string;
  /** `helm version --short`, e.g. v3.8.1+g5cb9af4. */
  version: string;
}

export interface HelmRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The helm binary and its version, or undefined (with why) when there is none that runs. */
export async function findHelm(binary = "helm"): Promise<{ helm?: HelmBinary; problem?: string }> {
  const run = await runHelm(binary, ["version", "--short"], { env: process.env, timeoutMs: VERSION_TIMEOUT_MS });
  if (run.code !== 0)
    return { problem: `${binary} version failed: ${(run.stderr || run.stdout).trim().split("\n")[0]}` };
  return { helm: { path: binary, version: run.stdout.trim() } };
}

/** Runs helm; never rejects (a missing binary is code 127). Arguments carry no secrets: files do. */
export function runHelm(
  binary: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<HelmRun> {
  return new Promise((resolve) => {
    execFile(
      binary,
      args,
      { env: options.env, timeout: options.timeoutMs, maxBuffer: MAX_OUTPUT_BYTES, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 127) : 0;
        const why = error && typeof error.code !== "number" ? `${error.message}\n` : "";
        resolve({ code, stdout: String(stdout), stderr: `${why}${String(stderr)}` });
      },
    );
  });
}

/** The environment of one helm run: the agent's, without what would point helm elsewhere, plus the run's own. */
export function helmEnvironment(own: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name === "KUBECONFIG" || name.startsWith("HELM_")) continue;
    env[name] = value;
  }
  return { ...env, ...own };
}
