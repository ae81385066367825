// Runs the real `virtualcluster` CLI as a child process, the way a user's shell does, and collects its output.

import { spawn } from "node:child_process";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Environment of the run (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed (default: nothing). */
  input?: string;
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: options.env ?? process.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(options.input ?? "");
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}
