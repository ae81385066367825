// `virtualcluster resume`: start a paused (or stopped) virtual cluster's runtime again with the settings and data it
// had, and wait until it is ready, as `create` does.

import { type RuntimeStatus, readRuntimeStatus } from "../runtime-status.ts";
import { runtimePid, startClusterRuntime } from "./cluster-runtime.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import { clusterPaths, readLocalCluster, writeLocalCluster } from "./local-clusters.ts";
import { waitUntilReady } from "./local-runtime.ts";
import { type RunStep, runQuietly } from "./run-step.ts";
import { checkRuntimeImage } from "./runtime-container.ts";

export interface ResumeOptions {
  name: string;
  namespace: string;
  /** The `virtualcluster` program's entry script (it runs the virtual cluster in the background). */
  program: string;
  /** How long to wait until the virtual cluster is ready (default 120 s). */
  timeoutMs?: number;
  step?: RunStep;
}

export interface ResumeResult {
  /** It was running already: nothing was started. */
  alreadyRunning: boolean;
  status?: RuntimeStatus;
}

export async function resumeVirtualCluster(options: ResumeOptions): Promise<ResumeResult> {
  const { name, namespace } = options;
  const state = readLocalCluster(namespace, name);
  if (!state) {
    throw new LifecycleError(
      `virtual cluster ${name} not found in namespace ${namespace} on this machine (see \`virtualcluster list\`)`,
    );
  }
  const paths = clusterPaths(namespace, name);
  if (runtimePid(state, paths) !== undefined) return { alreadyRunning: true, status: readRuntimeStatus(paths.dir) };
  if (state.container) await checkRuntimeImage(state.container);
  const { paused: _paused, ...cluster } = state;
  writeLocalCluster(cluster);
  const started = await startClusterRuntime(cluster, paths, options.program);
  const step = options.step ?? runQuietly;
  const status = await step(`Starting virtual cluster ${name}`, () =>
    waitUntilReady(paths, started, options.timeoutMs ?? 120_000),
  );
  return { alreadyRunning: false, status };
}
