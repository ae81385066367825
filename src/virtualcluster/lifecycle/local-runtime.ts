// The background `virtualcluster run` of a local virtual cluster: started detached (it outlives the command that
// started it) with its output in runtime.log and its PID in runtime.pid, found again through the PID, stopped with
// SIGTERM (the runtime then reports its platform instance offline), and waited for until it answers /readyz.
// runtime-container.ts runs the same command in a container instead; the waiting here serves both.

import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { join } from "node:path";
import { RUNTIME_NODE_FLAGS, runtimeEnvironment } from "../runtime-node-flags.ts";
import { type RuntimeStatus, readRuntimeStatus } from "../runtime-status.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import type { ClusterPaths, LocalCluster } from "./local-clusters.ts";
import { writePrivateFile } from "./local-clusters.ts";

const POLL_MS = 200;

/** A free TCP port on the listen address (asked once; kept in the state so the URL survives upgrades). */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function readPid(paths: ClusterPaths): number | undefined {
  try {
    const pid = Number(readFileSync(paths.pid, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is alive and is this cluster's runtime. Where /proc exists its command line must name the data
 * directory, so a PID reused by another program is never signalled.
 */
export function isRuntimeProcess(pid: number, paths: ClusterPaths): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const cmdline = `/proc/${pid}/cmdline`;
  if (!existsSync("/proc/self/cmdline")) return true;
  try {
    const args = readFileSync(cmdline, "utf8").split("\0");
    return args.includes("run") && args.includes(paths.dir);
  } catch {
    return false;
  }
}

/** The PID of the running runtime, or undefined when it is not running. */
export function runningPid(paths: ClusterPaths): number | undefined {
  const pid = readPid(paths);
  return pid !== undefined && isRuntimeProcess(pid, paths) ? pid : undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process with this PID exists (one of another user's counts too). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. False when nothing was running. */
export async function stopRuntime(paths: ClusterPaths, graceMs = 20_000): Promise<boolean> {
  const pid = runningPid(paths);
  if (pid === undefined) {
    rmSync(paths.pid, { force: true });
    return false;
  }
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  if (alive(pid)) {
    process.kill(pid, "SIGKILL");
    while (alive(pid)) await sleep(50);
  }
  rmSync(paths.pid, { force: true });
  return true;
}

export interface StartedRuntime {
  /** Size of the log before this start: what the new runtime wrote begins here. */
  logOffset: number;
  /** Whether the runtime has exited (or, in a container, its container stopped). */
  exited(): boolean;
}

export interface StartRuntimeOptions {
  cluster: LocalCluster;
  paths: ClusterPaths;
  /** The `virtualcluster` program's entry script, run with this Node; its `run` command is the runtime. */
  program: string;
}

/** The arguments of `virtualcluster run` for the cluster, with paths inside its directory. */
export function runtimeArguments(state: LocalCluster, paths: ClusterPaths): string[] {
  return [
    "run",
    "--name",
    state.name,
    "-n",
    state.namespace,
    "-f",
    paths.settings,
    "--host-kubeconfig",
    existsSync(paths.runtimeKubeconfig) ? paths.runtimeKubeconfig : paths.hostKubeconfig,
    "--data-dir",
    paths.dir,
    "--host",
    state.listenHost,
    "--port",
    String(state.port),
  ];
}

/** Size of the runtime's log now: where what a new start writes begins. */
export function logSize(paths: ClusterPaths): number {
  return existsSync(paths.log) ? statSync(paths.log).size : 0;
}

/** Starts `virtualcluster run` for the cluster in the background (own session, output appended to runtime.log). */
export function startRuntime(options: StartRuntimeOptions): StartedRuntime {
  const { cluster: state, paths } = options;
  rmSync(paths.status, { force: true });
  const logOffset = logSize(paths);
  const log = openSync(paths.log, "a", 0o600);
  try {
    const args = [...RUNTIME_NODE_FLAGS, options.program, ...runtimeArguments(state, paths)];
    const child = spawn(process.execPath, args, {
      cwd: paths.dir,
      detached: true,
      stdio: ["ignore", log, log],
      env: runtimeEnvironment({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "info" }),
    });
    const pid = child.pid;
    if (pid === undefined) throw new LifecycleError(`cannot start ${process.execPath}`);
    let exited = false;
    child.once("exit", () => {
      exited = true;
    });
    child.unref();
    writePrivateFile(paths.pid, `${pid}\n`);
    return { logOffset, exited: () => exited || !alive(pid) };
  } finally {
    closeSync(log);
  }
}

const CRI_LOG_PREFIX = /^\d{4}-\d\d-\d\dT\S+ (stdout|stderr) [FP] /;

/** The last problem the runtime logged after `offset` (pino JSON lines; other lines as they are). */
export function lastLoggedProblem(paths: ClusterPaths, offset: number): string | undefined {
  let text: string;
  try {
    text = readFileSync(paths.log).subarray(offset).toString("utf8");
  } catch {
    return undefined;
  }
  let problem: string | undefined;
  for (const logged of text.split("\n")) {
    // A container's log (podman's k8s-file driver) starts each line with its time, stream and P(artial) or F(ull).
    const line = logged.replace(CRI_LOG_PREFIX, "");
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string }; reason?: string };
      if ((entry.level ?? 0) >= 40) {
        problem = [entry.msg, entry.reason ?? entry.err?.message].filter(Boolean).join(": ");
      }
    } catch {
      if (/^error: /.test(line)) problem = line.replace(/^error: /, "");
    }
  }
  return problem;
}

/** GET <url>/readyz trusting the runtime's own CA: true on 200. */
function answersReady(url: string, caFile: string): Promise<boolean> {
  let ca: string;
  try {
    ca = readFileSync(caFile, "utf8");
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const req = request(new URL("/readyz", url), { ca, agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode === 200));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

/**
 * Waits until the runtime wrote status.json and its API answers /readyz. Fails with the runtime's last logged
 * problem when it exits first, and after `timeoutMs`.
 */
export async function waitUntilReady(
  paths: ClusterPaths,
  started: StartedRuntime,
  timeoutMs: number,
): Promise<RuntimeStatus> {
  const deadline = Date.now() + timeoutMs;
  const caFile = join(paths.dir, "pki", "ca.crt");
  for (;;) {
    const status = readRuntimeStatus(paths.dir);
    if (status?.url && (await answersReady(status.url, caFile))) return status;
    if (started.exited()) {
      const problem = lastLoggedProblem(paths, started.logOffset);
      throw new LifecycleError(
        `the virtual cluster exited while starting${problem ? `: ${problem}` : ""} (log: ${paths.log})`,
      );
    }
    if (Date.now() > deadline) {
      const problem = lastLoggedProblem(paths, started.logOffset);
      throw new LifecycleError(
        `the virtual cluster is not ready after ${Math.round(timeoutMs / 1000)}s (still starting${problem ? `; last problem: ${problem}` : ""}; log: ${paths.log})`,
      );
    }
    await sleep(POLL_MS);
  }
}
