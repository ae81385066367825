// Virtual clusters this machine runs (`virtualcluster create`): one directory each under
// <VIRTUALCLUSTER_HOME>/clusters/<namespace>/<name>/, which is also the runtime's data directory. It holds a copy of
// the host kubeconfig and the runtime's admin kubeconfig, so directories are 0700 and files 0600.

import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeStatusPath } from "../runtime-status.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import type { RuntimeContainer } from "./runtime-container.ts";
import { virtualclusterHome } from "./virtualcluster-home.ts";

/** What `create` registered on the platform for a virtual cluster (no secrets: the key's object name only). */
export interface PlatformRegistration {
  /** The platform's base URL as stored at login. */
  platform: string;
  project: string;
  instance: { namespace: string; name: string };
  /** Whether `create` made the instance (then `delete` removes it). */
  createdInstance: boolean;
  /** Object name of the dedicated access key `create` made. */
  accessKey?: string;
}

export interface LocalCluster {
  name: string;
  namespace: string;
  /** RFC 3339 time of the first create. */
  created: string;
  /** Where the virtual cluster's API listens; the port is chosen once and kept across upgrades. */
  listenHost: string;
  port: number;
  /** Server of the host cluster, for messages. */
  hostServer: string;
  /** Whether `create` wrote the default API key Secret in the host namespace. */
  wroteApiKeySecret?: boolean;
  registration?: PlatformRegistration;
  /** Stopped by `virtualcluster pause` (its data kept); `resume` or `create --upgrade` starts it again. */
  paused?: boolean;
  /** Runs in a container from this image (`create --container`) instead of as a background process. */
  container?: RuntimeContainer;
}

export interface ClusterPaths {
  dir: string;
  state: string;
  settings: string;
  hostKubeconfig: string;
  /** The runtime's own host credentials: its ServiceAccount's token (runtime-identity.ts). */
  runtimeKubeconfig: string;
  pid: string;
  log: string;
  /** Written by the runtime (see ../runtime-status.ts). */
  status: string;
  adminKubeconfig: string;
}

export function clustersRoot(home: string = virtualclusterHome()): string {
  return join(home, "clusters");
}

export function clusterPaths(namespace: string, name: string, home: string = virtualclusterHome()): ClusterPaths {
  const dir = join(clustersRoot(home), namespace, name);
  return {
    dir,
    state: join(dir, "cluster.json"),
    settings: join(dir, "virtualcluster.yaml"),
    hostKubeconfig: join(dir, "host.kubeconfig"),
    runtimeKubeconfig: join(dir, "runtime-host.kubeconfig"),
    pid: join(dir, "runtime.pid"),
    log: join(dir, "runtime.log"),
    status: runtimeStatusPath(dir),
    adminKubeconfig: join(dir, "admin.kubeconfig"),
  };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Names become host object names and path segments: DNS-1123 labels only. */
export function checkName(what: string, value: string): void {
  if (value.length > 63 || !DNS_LABEL.test(value)) {
    throw new LifecycleError(
      `${what} "${value}" is invalid: use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit`,
    );
  }
}

/** The stored state, or undefined when this machine has no such virtual cluster. */
export function readLocalCluster(namespace: string, name: string, home?: string): LocalCluster | undefined {
  const paths = clusterPaths(namespace, name, home);
  let text: string;
  try {
    text = readFileSync(paths.state, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new LifecycleError(`${paths.state}: cannot read the file (${(error as NodeJS.ErrnoException).code})`);
  }
  try {
    const state = JSON.parse(text) as LocalCluster;
    if (state.name !== name || state.namespace !== namespace || typeof state.port !== "number") throw new Error();
    return state;
  } catch {
    throw new LifecycleError(
      `${paths.state}: not a virtual cluster state file; remove ${paths.dir} or run \`virtualcluster delete ${name} -n ${namespace}\``,
    );
  }
}

/** Creates the cluster's directory (0700, parents too) and returns its paths. */
export function ensureClusterDir(namespace: string, name: string, home: string = virtualclusterHome()): ClusterPaths {
  const paths = clusterPaths(namespace, name, home);
  for (const dir of [home, clustersRoot(home), join(clustersRoot(home), namespace), paths.dir]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  return paths;
}

/** Writes a file whole with mode 0600 through a temporary file (never half-written, never readable by others). */
export function writePrivateFile(path: string, content: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, content, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new LifecycleError(`${path}: cannot write the file (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

export function writeLocalCluster(state: LocalCluster, home?: string): void {
  const paths = ensureClusterDir(state.namespace, state.name, home);
  writePrivateFile(paths.state, `${JSON.stringify(state, null, 2)}\n`);
}

const directories = (dir: string): string[] => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
};

/** Every virtual cluster with a state file, by namespace then name. Unreadable entries are skipped. */
export function listLocalClusters(home: string = virtualclusterHome()): LocalCluster[] {
  const found: LocalCluster[] = [];
  const root = clustersRoot(home);
  for (const namespace of directories(root)) {
    for (const name of directories(join(root, namespace))) {
      try {
        const state = readLocalCluster(namespace, name, home);
        if (state) found.push(state);
      } catch {
        // a damaged directory is reported by the commands that name it
      }
    }
  }
  return found;
}

/**
 * The host namespace of the virtual cluster `name` on this machine, for commands run without -n: the given one, else
 * the only namespace that has a virtual cluster of that name; a LifecycleError when there is none or several.
 */
export function namespaceOf(name: string, namespace: string | undefined, home?: string): string {
  if (namespace !== undefined) return namespace;
  const namespaces = listLocalClusters(home)
    .filter((cluster) => cluster.name === name)
    .map((cluster) => cluster.namespace);
  if (namespaces.length === 1) return namespaces[0];
  if (namespaces.length === 0) {
    throw new LifecycleError(
      `virtual cluster ${name} not found on this machine (see \`virtualcluster list\`); pass -n NAMESPACE for one on the host only`,
    );
  }
  throw new LifecycleError(`virtual cluster ${name} is in namespaces ${namespaces.join(", ")}: pass -n NAMESPACE`);
}

/** Removes the cluster's directory, and its namespace directory when that is left empty. */
export function removeLocalCluster(namespace: string, name: string, home: string = virtualclusterHome()): void {
  rmSync(clusterPaths(namespace, name, home).dir, { recursive: true, force: true });
  const namespaceDir = join(clustersRoot(home), namespace);
  if (directories(namespaceDir).length === 0) {
    try {
      if (readdirSync(namespaceDir).length === 0) rmSync(namespaceDir, { recursive: true, force: true });
    } catch {
      // already gone
    }
  }
}
