// Runs the real `virtualcluster` CLI as a child process and collects what it printed.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The whole environment of the process (default: this one's). */
  env?: NodeJS.ProcessEnv;
  /** Written to its stdin, which is then closed. */
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

/** Whether a process (e.g. a virtual cluster's background runtime) is alive. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops the background runtime of a virtual cluster's directory (teardown), if its PID file names a live one. */
export function stopBackgroundRuntime(clusterDir: string): void {
  const pidFile = join(clusterDir, "runtime.pid");
  if (!existsSync(pidFile)) return;
  try {
    process.kill(Number(readFileSync(pidFile, "utf8")), "SIGTERM");
  } catch {
    // not running
  }
}

/** Exit code 1 and exactly one stderr line (no stack trace) matching `pattern`; nothing on stdout. */
export function assertCliFailure(run: CliRun, pattern: RegExp): void {
  assert.equal(run.code, 1, `expected exit 1: ${run.stdout}${run.stderr}`);
  assert.equal(run.stdout, "");
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line expected:\n${run.stderr}`);
  assert.match(lines[0], /^error: /);
  assert.match(lines[0], pattern);
}
