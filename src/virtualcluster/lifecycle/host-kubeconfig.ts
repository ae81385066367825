// The host cluster's kubeconfig as `create` and `delete` find it: a file, else KUBECONFIG's files merged as kubectl
// merges them, else ~/.kube/config. What they keep of it is the current context alone (its context, cluster and user)
// with every path made absolute: the copy `create` writes for later commands, since the user's current context may
// move (to the virtual cluster after `connect`, for one). Read without @kubernetes/client-node, whose module graph
// alone cost a `create` about a second of CPU; kube-access.ts hands it what only it understands (exec plugins).

import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, sep } from "node:path";
import { parseKubeconfigDocument } from "../kube/kubeconfig-file.ts";
import { firstLine, LifecycleError } from "./lifecycle-error.ts";

/** The current context's cluster, as the runtime's own kubeconfig repeats it (runtime-identity.ts). */
export interface HostClusterEntry {
  name: string;
  server: string;
  /** certificate-authority-data (base64). */
  caData?: string;
  /** certificate-authority, absolute. */
  caFile?: string;
  insecure: boolean;
}

export interface HostKubeconfig {
  /** The file it was read from, or "your kubeconfig" (errors name it). */
  source: string;
  cluster: HostClusterEntry;
  /** The current context alone as a kubeconfig document (JSON), paths absolute. */
  text: string;
}

type Fields = Record<string, unknown>;
type Named = { name: string; dir: string; entry: Fields };

const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A kubeconfig document (JSON without loading the YAML parser: the copies `create` keeps are JSON). */
function parseDocument(text: string): Fields {
  const document = parseKubeconfigDocument(text);
  if (document === null || document === undefined) return {};
  if (!isFields(document)) throw new Error("the document is not a mapping");
  return document;
}

/** kubectl's merge of several files: the first file to name an entry (or the current context) wins. */
function merge(files: { dir: string; document: Fields }[]) {
  let current: string | undefined;
  const lists = {
    clusters: new Map<string, Named>(),
    users: new Map<string, Named>(),
    contexts: new Map<string, Named>(),
  };
  for (const { dir, document } of files) {
    const named = document["current-context"];
    if (current === undefined && typeof named === "string" && named !== "") current = named;
    for (const kind of ["clusters", "users", "contexts"] as const) {
      const list = document[kind];
      if (!Array.isArray(list)) continue;
      for (const item of list) {
        if (!isFields(item) || typeof item.name !== "string" || lists[kind].has(item.name)) continue;
        lists[kind].set(item.name, { name: item.name, dir, entry: item });
      }
    }
  }
  return { current, ...lists };
}

/** A copy of `fields` with the path-valued ones kubectl resolves taken relative to `dir`. */
function absolutePaths(fields: Fields, names: readonly string[], dir: string): Fields {
  const copy: Fields = { ...fields };
  for (const name of names) {
    const value = copy[name];
    if (typeof value === "string" && value !== "" && !isAbsolute(value)) copy[name] = join(dir, value);
  }
  return copy;
}

const CLUSTER_PATHS = ["certificate-authority"] as const;
const USER_PATHS = ["client-certificate", "client-key", "tokenFile", "token-file"] as const;

function userWithAbsolutePaths(user: Fields, dir: string): Fields {
  const copy = absolutePaths(user, USER_PATHS, dir);
  // An exec plugin named by a relative path with a separator is relative to its file, as kubectl runs it.
  if (isFields(user.exec) && typeof user.exec.command === "string" && user.exec.command.includes(sep)) {
    copy.exec = absolutePaths(user.exec, ["command"], dir);
  }
  return copy;
}

/** The current context alone, or undefined when there is none with a cluster that names a server. */
function currentContext(files: { dir: string; document: Fields }[], source: string): HostKubeconfig | undefined {
  const merged = merge(files);
  const context = merged.current === undefined ? undefined : merged.contexts.get(merged.current);
  const fields = isFields(context?.entry.context) ? context.entry.context : undefined;
  const cluster = typeof fields?.cluster === "string" ? merged.clusters.get(fields.cluster) : undefined;
  const clusterFields = isFields(cluster?.entry.cluster) ? cluster.entry.cluster : undefined;
  const server = clusterFields?.server;
  if (!context || !fields || !cluster || !clusterFields || typeof server !== "string" || server === "")
    return undefined;
  const user = typeof fields.user === "string" ? merged.users.get(fields.user) : undefined;
  const resolvedCluster = absolutePaths(clusterFields, CLUSTER_PATHS, cluster.dir);
  const document = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: cluster.name, cluster: resolvedCluster }],
    users: user
      ? [{ name: user.name, user: userWithAbsolutePaths(isFields(user.entry.user) ? user.entry.user : {}, user.dir) }]
      : [],
    contexts: [{ name: context.name, context: fields }],
    "current-context": context.name,
  };
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  return {
    source,
    cluster: {
      name: cluster.name,
      server,
      caData: text(resolvedCluster["certificate-authority-data"]),
      caFile: text(resolvedCluster["certificate-authority"]),
      insecure: resolvedCluster["insecure-skip-tls-verify"] === true,
    },
    text: `${JSON.stringify(document, null, 2)}\n`,
  };
}

function readKubeconfig(file: string): { dir: string; document: Fields } {
  return { dir: dirname(file), document: parseDocument(readFileSync(file, "utf8")) };
}

/** Loads the host kubeconfig: `file`, else KUBECONFIG / ~/.kube/config with its current context. */
export function loadHostKubeconfig(file?: string): HostKubeconfig {
  let files: { dir: string; document: Fields }[];
  if (file !== undefined) {
    if (!existsSync(file)) throw new LifecycleError(`--host-kubeconfig ${file}: no such file`);
    try {
      files = [readKubeconfig(file)];
    } catch (error) {
      throw new LifecycleError(`--host-kubeconfig ${file}: not a kubeconfig (${firstLine(error)})`);
    }
  } else {
    const named = (process.env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
    const candidates = (named.length > 0 ? named : [join(homedir(), ".kube", "config")]).filter((candidate) =>
      existsSync(candidate),
    );
    if (candidates.length === 0) {
      throw new LifecycleError(
        "no host cluster: pass --host-kubeconfig <file>, or set a current context in your kubeconfig",
      );
    }
    try {
      files = candidates.map(readKubeconfig);
    } catch (error) {
      throw new LifecycleError(`cannot read your kubeconfig: ${firstLine(error)}`);
    }
  }
  const source = file ?? "your kubeconfig";
  const found = currentContext(files, source);
  if (!found) {
    throw new LifecycleError(`${source} has no current context with a cluster: pass --host-kubeconfig <file>`);
  }
  return found;
}
