// How a virtual cluster's runtime runs on this machine: a background process (local-runtime.ts), or a container when
// its state names an image (runtime-container.ts). Stopping stops either, so switching between them on an upgrade
// never leaves the old one running.

import type { ClusterPaths, LocalCluster } from "./local-clusters.ts";
import { runningPid, type StartedRuntime, startRuntime, stopRuntime } from "./local-runtime.ts";
import { inspectRuntimeContainer, startRuntimeContainer, stopRuntimeContainer } from "./runtime-container.ts";

type ClusterName = Pick<LocalCluster, "name" | "namespace">;

export function startClusterRuntime(
  state: LocalCluster,
  paths: ClusterPaths,
  program: string,
): Promise<StartedRuntime> {
  if (state.container) return startRuntimeContainer(state, paths, state.container);
  return Promise.resolve(startRuntime({ cluster: state, paths, program }));
}

/** Stops the runtime, whichever way it runs; false when nothing was running. */
export async function stopClusterRuntime(cluster: ClusterName, paths: ClusterPaths): Promise<boolean> {
  const process = await stopRuntime(paths);
  const container = await stopRuntimeContainer(cluster, paths);
  return process || container;
}

/** The running runtime's PID on this machine (a container's process as the host sees it), or undefined. */
export function runtimePid(state: LocalCluster, paths: ClusterPaths): number | undefined {
  if (state.container) return inspectRuntimeContainer(state, paths)?.pid;
  return runningPid(paths);
}
