// A virtual cluster's runtime in a container (`virtualcluster create --container`): the same `virtualcluster run` as
// the background process (local-runtime.ts), from the virtualcluster-platform image (`npm run image`), with podman.
// It shares the host's network (it listens on the same address and port, and reaches the host cluster and the
// platform at the addresses their kubeconfigs name), runs with a read-only root, and keeps its data in the cluster's
// directory, mounted at the same path so every path the runtime writes means the same inside and out. Its output
// goes to the same runtime.log (podman's k8s-file driver appends to it). As root, the directory is handed to the
// image's user except the deployer's host kubeconfig and the state file, which the runtime never reads; rootless,
// the container runs as the caller (keep-id).

import { createHash } from "node:crypto";
import { lchownSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { platformVersion } from "../../apimachinery/version.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import type { ClusterPaths, LocalCluster } from "./local-clusters.ts";
import { logSize, runtimeArguments, type StartedRuntime } from "./local-runtime.ts";
import { podman, podmanSync } from "./podman.ts";

export const RUNTIME_IMAGE_REPOSITORY = "localhost/virtualcluster-platform";
/** The image's user (see container/Containerfile). */
const IMAGE_UID = 65532;
const DATA_DIR_LABEL = "virtualcluster.platform.sh/data-dir";
/** As long as the process runtime gets to stop before SIGKILL. */
const STOP_SECONDS = 20;
/** How often a start in progress asks podman whether the container still runs. */
const EXITED_CHECK_MS = 1_000;

/** How the runtime of a virtual cluster runs when it runs in a container (kept in its state). */
export interface RuntimeContainer {
  image: string;
}

/** The image `npm run image` builds for this version. */
export function defaultRuntimeImage(): string {
  return `${RUNTIME_IMAGE_REPOSITORY}:${platformVersion().version}`;
}

/** One container per cluster directory: two homes with a cluster of the same name never share one. */
export function runtimeContainerName(state: Pick<LocalCluster, "name" | "namespace">, paths: ClusterPaths): string {
  const digest = createHash("sha256").update(paths.dir).digest("hex").slice(0, 8);
  return `virtualcluster-${state.namespace}-${state.name}-${digest}`;
}

/** Gives the runtime's files to the image's user (as root), leaving the deployer's credentials and the state root's. */
function handOverDirectory(paths: ClusterPaths): void {
  handOverToImageUser(paths.dir, new Set([paths.hostKubeconfig, paths.state, paths.log, paths.pid]));
}

/**
 * As root: gives `dir` and what is in it, except the paths in `keep`, to the image's user, so the runtime in the
 * container may read and write its mounted directory. Elsewhere the container runs as the caller (nothing to do).
 */
export function handOverToImageUser(dir: string, keep: ReadonlySet<string>): void {
  if (process.getuid?.() !== 0) return;
  const give = (path: string) => {
    try {
      lchownSync(path, IMAGE_UID, IMAGE_UID);
    } catch (error) {
      throw new LifecycleError(
        `cannot give ${path} to the container's user ${IMAGE_UID} (${(error as NodeJS.ErrnoException).code}): ` +
          "the virtual cluster's directory must be on a file system root may change owners on (VIRTUALCLUSTER_HOME moves it)",
      );
    }
  };
  const walk = (current: string) => {
    give(current);
    // Bounded: the cluster's own directory, a few levels deep (pki/, audit files).
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (keep.has(path)) continue;
      if (entry.isDirectory()) walk(path);
      else give(path);
    }
  };
  walk(dir);
}

/** podman run arguments for the user the container runs as: the image's as root, the caller's when rootless. */
export function containerUserArguments(): string[] {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return [];
  return ["--userns=keep-id", "--user", `${uid}:${process.getgid?.() ?? uid}`];
}

interface ContainerState {
  running: boolean;
  pid?: number;
}

/** The cluster's container as podman sees it; undefined when there is none (or it belongs to another directory). */
export function inspectRuntimeContainer(
  state: Pick<LocalCluster, "name" | "namespace">,
  paths: ClusterPaths,
): ContainerState | undefined {
  let text: string;
  try {
    text = podmanSync([
      "container",
      "inspect",
      "--format",
      `{{.State.Running}} {{.State.Pid}} {{index .Config.Labels "${DATA_DIR_LABEL}"}}`,
      runtimeContainerName(state, paths),
    ]);
  } catch {
    return undefined;
  }
  const [running, pid, dir] = text.trim().split(" ");
  if (dir !== paths.dir) return undefined;
  return running === "true" ? { running: true, pid: Number(pid) } : { running: false };
}

/** Fails, saying how to get it, when podman or the image is missing (checked before anything is changed). */
export async function checkRuntimeImage(container: RuntimeContainer): Promise<void> {
  try {
    await podman(["image", "exists", container.image]);
  } catch (error) {
    if (error instanceof LifecycleError && /not installed/.test(error.message)) throw error;
    throw new LifecycleError(
      `the image ${container.image} is not on this machine: build it with \`npm run image\` in a checkout of virtualcluster-platform, or pass --container-image`,
    );
  }
}

/** Starts the runtime's container (replacing a stopped one of an earlier start). */
export async function startRuntimeContainer(
  state: LocalCluster,
  paths: ClusterPaths,
  container: RuntimeContainer,
): Promise<StartedRuntime> {
  rmSync(paths.status, { force: true });
  rmSync(paths.pid, { force: true });
  handOverDirectory(paths);
  const logOffset = logSize(paths);
  const name = runtimeContainerName(state, paths);
  await podman([
    "run",
    "--detach",
    "--replace",
    "--pull=never",
    `--name=${name}`,
    `--label=virtualcluster.platform.sh/cluster=${state.namespace}/${state.name}`,
    `--label=${DATA_DIR_LABEL}=${paths.dir}`,
    "--network=host",
    "--read-only",
    // Its data is the mounted directory: no anonymous volume for the image's /var/lib/virtualcluster.
    "--image-volume=ignore",
    `--stop-timeout=${STOP_SECONDS}`,
    "--log-driver=k8s-file",
    `--log-opt=path=${paths.log}`,
    ...containerUserArguments(),
    // Z: a private SELinux label where SELinux is on (ignored elsewhere).
    `--volume=${paths.dir}:${paths.dir}:Z`,
    `--env=LOG_LEVEL=${process.env.LOG_LEVEL ?? "info"}`,
    // The platform access key, when it comes from the environment, by name only (not on the command line).
    ...(process.env.LICENSE ? ["--env=LICENSE"] : []),
    container.image,
    ...runtimeArguments(state, paths),
  ]);
  let checked = 0;
  let exited = false;
  return {
    logOffset,
    exited() {
      if (!exited && Date.now() - checked >= EXITED_CHECK_MS) {
        checked = Date.now();
        exited = inspectRuntimeContainer(state, paths)?.running !== true;
      }
      return exited;
    },
  };
}

/** Stops (SIGTERM, then SIGKILL after STOP_SECONDS) and removes the container; false when it was not running. */
export async function stopRuntimeContainer(
  state: Pick<LocalCluster, "name" | "namespace">,
  paths: ClusterPaths,
): Promise<boolean> {
  const found = inspectRuntimeContainer(state, paths);
  if (!found) return false;
  await podman([
    ...["rm", "--force", "--volumes", `--time=${STOP_SECONDS}`, "--ignore"],
    runtimeContainerName(state, paths),
  ]);
  return found.running;
}
