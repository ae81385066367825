// How a virtual cluster's runtime runs on this machine: a background process (local-runtime.ts), or a container when
// its state names an image (runtime-container.ts). Stopping goes by the state the runtime was started with (create
// passes the state from before an upgrade), so switching between the two never leaves the old one running; podman is
// asked only about virtual clusters that run in containers.

import type { ClusterPaths, LocalCluster } from "./local-clusters.ts";
import { runningPid, type StartedRuntime, startRuntime, stopRuntime } from "./local-runtime.ts";
import { inspectRuntimeContainer, startRuntimeContainer, stopRuntimeContainer } from "./runtime-container.ts";

export function startClusterRuntime(
  state: LocalCluster,
  paths: ClusterPaths,
  program: string,
): Promise<StartedRuntime> {
  if (state.container) return startRuntimeContainer(state, paths, state.container);
  return Promise.resolve(startRuntime({ cluster: state, paths, program }));
}

/**
 * Stops the runtime of a virtual cluster whose state (if this machine has it) is `state`: the background process if
 * one runs, and its container when the state says it runs in one. False when nothing was running.
 */
export async function stopClusterRuntime(paths: ClusterPaths, state: LocalCluster | undefined): Promise<boolean> {
  const process = await stopRuntime(paths);
  const container = state?.container ? await stopRuntimeContainer(state, paths) : false;
  return process || container;
}

/** The running runtime's PID on this machine (a container's process as the host sees it), or undefined. */
export function runtimePid(state: LocalCluster, paths: ClusterPaths): number | undefined {
  if (state.container) return inspectRuntimeContainer(state, paths)?.pid;
  return runningPid(paths);
}
