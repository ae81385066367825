// Runs a build tool (mmdebstrap, tar, strip, tsc, vite, podman) without a shell and fails with its output when it
// fails: a build step either worked or says why.

import { spawn } from "node:child_process";

export interface ToolOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Runs `command args`; resolves with its standard output, rejects with its last lines of output. */
export function runTool(command: string, args: string[], options: ToolOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.once("error", (error) => reject(new Error(`cannot run ${command}: ${error.message}`)));
    child.once("close", (code, signal) => {
      if (code === 0) return resolve(stdout);
      const tail = `${stdout}${stderr}`.trim().split("\n").slice(-20).join("\n");
      reject(new Error(`${command} ${args.join(" ")} failed (${signal ?? `exit ${code}`}):\n${tail}`));
    });
  });
}
