// How the agent starts one placed virtual cluster's runtime: `virtualcluster run` as its child process, or, where
// podman and the image are on this machine, the same command in a container of the image (the specification:
// endpoint syncing works when the control plane runs as a container). Either way the agent supervises one child:
// node itself, or an attached `podman run` that passes SIGTERM on to the container and removes it when it ends.
// The container shares the host's network, runs with a read-only root and mounts the runtime's directory at the
// same path, so every path in its arguments means the same inside and out.

import { createHash } from "node:crypto";
import { podmanProgram } from "../virtualcluster/lifecycle/podman.ts";
import {
  checkRuntimeImage,
  containerUserArguments,
  handOverToImageUser,
  type RuntimeContainer,
} from "../virtualcluster/lifecycle/runtime-container.ts";
import { RUNTIME_NODE_FLAGS, runtimeEnvironment } from "../virtualcluster/runtime-node-flags.ts";

/** The files of one runtime the agent keeps (see Runtimes). */
export interface RuntimeFiles {
  dir: string;
  key: string;
  placement: string;
  kubeconfig: string;
  settings: string;
  data: string;
  log: string;
  pid: string;
}

export interface RuntimeLaunchOptions {
  name: string;
  hostNamespace: string;
  files: RuntimeFiles;
  /** The runtime's own variables (platform address, its key): passed by name, never on a command line. */
  variables: Record<string, string>;
  /** The `virtualcluster` program's entry script, for a process. */
  program: string;
  /** Set: run in a container of this image. */
  container?: RuntimeContainer;
}

export interface RuntimeLaunch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** The podman container of the runtime in `dir`: one per runtime directory. */
export function agentRuntimeContainerName(files: Pick<RuntimeFiles, "dir">): string {
  return `virtualcluster-agent-${createHash("sha256").update(files.dir).digest("hex").slice(0, 16)}`;
}

function runArguments(options: RuntimeLaunchOptions): string[] {
  const { files } = options;
  return [
    ...["run", "--name", options.name, "-n", options.hostNamespace, "-f", files.settings],
    ...["--host-kubeconfig", files.kubeconfig, "--data-dir", files.data, "--port", "0"],
  ];
}

function containerArguments(options: RuntimeLaunchOptions, container: RuntimeContainer): string[] {
  const { files } = options;
  return [
    ...["run", "--rm", "--replace", "--pull=never", `--name=${agentRuntimeContainerName(files)}`],
    `--label=virtualcluster.platform.sh/agent-runtime=${files.dir}`,
    ...["--network=host", "--read-only", "--image-volume=ignore", "--stop-timeout=20"],
    ...containerUserArguments(),
    // Z: a private SELinux label where SELinux is on (ignored elsewhere).
    `--volume=${files.dir}:${files.dir}:Z`,
    ...Object.keys(options.variables).map((name) => `--env=${name}`),
    container.image,
    ...runArguments(options),
  ];
}

/** The command that runs the runtime, with its environment; in a container, its directory is handed over first. */
export function runtimeLaunch(options: RuntimeLaunchOptions): RuntimeLaunch {
  const env = runtimeEnvironment({ ...process.env, ...options.variables });
  if (!options.container) {
    return { command: process.execPath, args: [...RUNTIME_NODE_FLAGS, options.program, ...runArguments(options)], env };
  }
  // The key stays root's: it reaches the runtime as a variable. The placement, log and pid are the agent's.
  const { files } = options;
  handOverToImageUser(files.dir, new Set([files.key, files.placement, files.log, files.pid]));
  return { command: podmanProgram(), args: containerArguments(options, options.container), env };
}

/** How the agent runs the virtual clusters placed on its cluster. */
export type RuntimeMode = "auto" | "process" | "container";

/**
 * The container the runtimes run in, or undefined for processes: `auto` picks a container when podman and the
 * image are on this machine; `container` insists (and says what is missing).
 */
export async function chooseRuntimeContainer(mode: RuntimeMode, image: string): Promise<RuntimeContainer | undefined> {
  if (mode === "process") return undefined;
  try {
    await checkRuntimeImage({ image });
    return { image };
  } catch (error) {
    if (mode === "container") throw error;
    return undefined;
  }
}
