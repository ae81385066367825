// `virtualcluster pause`: stop a virtual cluster's background runtime and keep everything else (its data directory
// with the store, the host objects, the platform registration), as `vcluster pause` does. The runtime reports its
// platform instance offline as it stops; `resume` starts it again.

import { stopClusterRuntime } from "./cluster-runtime.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import { clusterPaths, readLocalCluster, writeLocalCluster } from "./local-clusters.ts";
import { type RunStep, runQuietly } from "./run-step.ts";

export interface PauseOptions {
  name: string;
  namespace: string;
  step?: RunStep;
}

/** Stops the runtime and marks the virtual cluster paused; `stopped` is false when it was not running. */
export async function pauseVirtualCluster(options: PauseOptions): Promise<{ stopped: boolean }> {
  const { name, namespace } = options;
  const state = readLocalCluster(namespace, name);
  if (!state) {
    throw new LifecycleError(
      `virtual cluster ${name} not found in namespace ${namespace} on this machine (see \`virtualcluster list\`)`,
    );
  }
  const step = options.step ?? runQuietly;
  const stopped = await step(`Stopping virtual cluster ${name}`, () =>
    stopClusterRuntime(clusterPaths(namespace, name), state),
  );
  writeLocalCluster({ ...state, paused: true });
  return { stopped };
}
