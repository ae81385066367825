// `virtualcluster create` once its options are parsed: runs the lifecycle (src/virtualcluster/lifecycle/) with a
// spinner per step, then says where the virtual cluster is, how to reach it and what to know.

import { type CreateResult, createVirtualCluster } from "../virtualcluster/lifecycle/create-virtual-cluster.ts";
import { LifecycleError } from "../virtualcluster/lifecycle/lifecycle-error.ts";
import { clusterPaths } from "../virtualcluster/lifecycle/local-clusters.ts";
import { DEFAULT_PROJECT } from "../virtualcluster/lifecycle/platform-registration.ts";
import {
  defaultRuntimeImage,
  type RuntimeContainer,
  runtimeContainerName,
} from "../virtualcluster/lifecycle/runtime-container.ts";
import { describeSettingsChanges } from "../virtualcluster/lifecycle/settings-changes.ts";
import { readClientConfig } from "./client-config.ts";
import type { CreateFlags } from "./create.ts";
import { platformClient } from "./platform-session.ts";
import { PROGRAM } from "./program.ts";
import { colorEnabled, styles, withProgress, withSpinner } from "./terminal.ts";

export async function createCommandAction(name: string, flags: CreateFlags): Promise<void> {
  const login = readClientConfig().platform;
  const result = await createVirtualCluster({
    name,
    namespace: flags.namespace,
    settingsFile: flags.file,
    upgrade: flags.upgrade,
    resetSettings: flags.resetSettings,
    project: flags.project,
    hostKubeconfig: flags.hostKubeconfig,
    port: flags.port,
    container: containerChoice(flags),
    timeoutMs: (flags.timeout ?? 120) * 1000,
    platform: login ? platformClient(login) : undefined,
    program: PROGRAM,
    step: withSpinner,
    waitStep: withProgress,
  });
  report(result);
}

/** --container [--container-image IMAGE], --no-container, or undefined to keep what the virtual cluster had. */
function containerChoice(flags: CreateFlags): RuntimeContainer | false | undefined {
  if (flags.containerImage !== undefined) {
    if (flags.container === false)
      throw new LifecycleError("--container-image goes with --container, not --no-container");
    return { image: flags.containerImage };
  }
  if (flags.container === undefined) return undefined;
  return flags.container && { image: defaultRuntimeImage() };
}

function report({ cluster, status, updated, notes, settings }: CreateResult): void {
  const paths = clusterPaths(cluster.namespace, cluster.name);
  const style = styles(colorEnabled(process.stdout));
  const out: string[] = [
    `${style.green(updated ? "Updated" : "Created")} virtual cluster ${cluster.name} in namespace ${cluster.namespace}: ${status.url}`,
    `  kubectl --kubeconfig ${paths.adminKubeconfig} get namespaces`,
  ];
  if (updated && settings) {
    out.push(
      settings.kept
        ? "Settings: kept the stored settings (-f FILE replaces them, --reset-settings drops them)"
        : `Settings: ${describeSettingsChanges(settings.changes)}`,
    );
  }
  const platform = status.platform;
  if (platform?.connected) {
    const project = platform.project ?? cluster.registration?.project ?? DEFAULT_PROJECT;
    out.push(
      `Connected to the platform ${platform.platform} as ${platform.instance?.namespace}/${platform.instance?.name}`,
    );
    out.push(`  virtualcluster connect ${platform.instance?.name ?? cluster.name} --project ${project}`);
  }
  if (cluster.container) {
    out.push(`Container: ${runtimeContainerName(cluster, paths)} (${cluster.container.image})`);
  }
  out.push(`Logs: ${paths.log}`);
  process.stdout.write(`${out.join("\n")}\n`);
  for (const note of notes) process.stderr.write(`Note: ${note}\n`);
  if (platform && !platform.connected) {
    process.stderr.write(
      `${style.yellow("Warning:")} not connected to the platform: ${platform.error ?? "unknown error"}\n`,
    );
  }
}
