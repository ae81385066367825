// Merging a single-context kubeconfig (as the platform returns it) into the user's kubeconfig file, as
// `kubectl config` would: entries with the same names are replaced, everything else is kept, and the file stays
// private (0600) because it holds credentials.

import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import { CommandError } from "./command-error.ts";

interface Named {
  name: string;
  [field: string]: unknown;
}

interface KubeconfigDocument {
  clusters?: Named[];
  users?: Named[];
  contexts?: (Named & { context?: { cluster?: string; user?: string; namespace?: string } })[];
  "current-context"?: string;
  [field: string]: unknown;
}

/** The file `connect` writes: --kubeconfig, else the first KUBECONFIG entry, else ~/.kube/config. */
export function targetKubeconfig(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return flag;
  const first = (env.KUBECONFIG ?? "").split(delimiter).find(Boolean);
  return first ?? join(homedir(), ".kube", "config");
}

function parseDocument(text: string, where: string): KubeconfigDocument {
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new CommandError(`${where}: not a kubeconfig (${(error as Error).message.split("\n")[0]})`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new CommandError(`${where}: not a kubeconfig`);
  const document = value as KubeconfigDocument;
  for (const list of ["clusters", "users", "contexts"] as const) {
    const entries = document[list];
    if (entries === undefined || entries === null) continue;
    if (!Array.isArray(entries) || entries.some((entry) => typeof entry?.name !== "string")) {
      throw new CommandError(`${where}: ${list} must be a list of named entries`);
    }
  }
  return document;
}

export interface MergeResult {
  text: string;
  context: string;
  server: string;
}

const upsert = (list: Named[] | undefined, entry: Named): Named[] => {
  const rest = (list ?? []).filter((item) => item.name !== entry.name);
  return [...rest, entry];
};

/**
 * Adds the current context of `incoming` (with its cluster and user) to `existing` and makes it current. The user
 * entry is renamed after the context, so two virtual clusters never share a user entry.
 */
export function mergeKubeconfig(existing: string, incoming: string, where: string): MergeResult {
  const source = parseDocument(incoming, "the kubeconfig from the platform");
  const contextName = source["current-context"];
  const context = source.contexts?.find((entry) => entry.name === contextName);
  const cluster = source.clusters?.find((entry) => entry.name === context?.context?.cluster);
  const user = source.users?.find((entry) => entry.name === context?.context?.user);
  if (!contextName || !context || !cluster || !user) {
    throw new CommandError("the kubeconfig from the platform has no complete current context");
  }
  const target = parseDocument(existing, where);
  const document: KubeconfigDocument = {
    apiVersion: "v1",
    kind: "Config",
    ...target,
  };
  document.clusters = upsert(target.clusters, cluster);
  document.users = upsert(target.users, { ...user, name: contextName });
  document.contexts = upsert(target.contexts, {
    ...context,
    context: { ...context.context, user: contextName },
  });
  document["current-context"] = contextName;
  const server = String((cluster.cluster as { server?: unknown } | undefined)?.server ?? "");
  return { text: stringify(document), context: contextName, server };
}

/** The current context of a kubeconfig text, if it names one ("" and unparsable texts: none). */
export function currentContext(text: string): string | undefined {
  try {
    const value = parse(text) as KubeconfigDocument | null;
    const current = value?.["current-context"];
    return typeof current === "string" && current !== "" ? current : undefined;
  } catch {
    return undefined;
  }
}

export interface RemoveResult {
  text: string;
  /** The context was in the file. */
  removed: boolean;
  /** The context made current instead of the removed one. */
  switchedTo?: string;
}

/**
 * Removes a context and the user entry named after it (as mergeKubeconfig names it), and its cluster entry when no
 * other context uses it. When it was current, `previous` becomes current if it is still there; else none is.
 */
export function removeKubeconfigContext(
  existing: string,
  contextName: string,
  previous: string | undefined,
  where: string,
): RemoveResult {
  const document = parseDocument(existing, where);
  const context = document.contexts?.find((entry) => entry.name === contextName);
  if (!context) return { text: existing, removed: false };
  const contexts = (document.contexts ?? []).filter((entry) => entry !== context);
  const clusterName = context.context?.cluster;
  const clusterInUse = contexts.some((entry) => entry.context?.cluster === clusterName);
  const result: KubeconfigDocument = {
    ...document,
    contexts,
    users: (document.users ?? []).filter((entry) => entry.name !== context.context?.user),
    clusters: (document.clusters ?? []).filter((entry) => clusterInUse || entry.name !== clusterName),
  };
  let switchedTo: string | undefined;
  if (document["current-context"] === contextName) {
    switchedTo = previous !== undefined && contexts.some((entry) => entry.name === previous) ? previous : undefined;
    if (switchedTo) result["current-context"] = switchedTo;
    else delete result["current-context"];
  }
  return { text: stringify(result), removed: true, switchedTo };
}

/** Reads the file ("" when missing). */
export function readKubeconfigFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw new CommandError(`${path}: cannot read the file (${(error as NodeJS.ErrnoException).code})`);
  }
}

/** Writes the whole file with mode 0600 through a temporary file; a new directory is 0700. */
export function writeKubeconfigFile(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, text, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new CommandError(`${path}: cannot write the file (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}
