// The current context of a kubeconfig file, as kubectl reads it: its cluster (server, CA, TLS settings) and user
// (token, token file, client certificate, basic auth, impersonation), with files read and relative paths taken from the
// kubeconfig's own directory. Entries this reader does not handle itself are flagged for client-node.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join } from "node:path";

/** A JSON kubeconfig (what the platform's tools write) is read without the YAML parser, which then never loads. */
export function parseKubeconfigDocument(source: string): unknown {
  if (source.trimStart().startsWith("{")) {
    try {
      return JSON.parse(source);
    } catch {
      // YAML flow style also starts with "{": let the YAML parser say what is wrong
    }
  }
  const yaml = createRequire(import.meta.url)("yaml") as typeof import("yaml");
  return yaml.parse(source);
}

export interface ClusterEntry {
  server: string;
  ca?: Buffer;
  insecure: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

export interface UserEntry {
  token?: string;
  tokenFile?: string;
  cert?: Buffer;
  key?: Buffer;
  username?: string;
  password?: string;
  /** Impersonation (`as`, `as-groups`): sent as Impersonate-User and Impersonate-Group. */
  as?: string;
  asGroups?: string[];
  /** exec, auth-provider or the impersonation fields this reader does not send (uid, extras): client-node. */
  needsClientNode: boolean;
}

export interface CurrentContext {
  cluster?: ClusterEntry;
  user?: UserEntry;
}

type Fields = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

function named(list: unknown, name: unknown, field: string): Fields | undefined {
  if (!Array.isArray(list) || typeof name !== "string") return undefined;
  const entry = list.find((item) => (item as Fields | null)?.name === name) as Fields | undefined;
  const value = entry?.[field];
  return value && typeof value === "object" ? (value as Fields) : undefined;
}

/** Parses kubeconfig text; `file` names it in errors and anchors its relative paths. */
export function parseKubeconfig(source: string, file: string): CurrentContext {
  let document: Fields;
  try {
    document = (parseKubeconfigDocument(source) ?? {}) as Fields;
  } catch (error) {
    throw new Error(`cannot parse kubeconfig ${file}: ${(error as Error).message}`);
  }
  const root = dirname(file);
  const path = (value: unknown) => {
    const found = text(value);
    return found === undefined ? undefined : isAbsolute(found) ? found : join(root, found);
  };
  const bytes = (data: unknown, pathValue: unknown): Buffer | undefined => {
    const encoded = text(data);
    if (encoded !== undefined) return Buffer.from(encoded, "base64");
    const where = path(pathValue);
    if (where === undefined) return undefined;
    try {
      return readFileSync(where);
    } catch (error) {
      throw new Error(`cannot read ${where} named by kubeconfig ${file}: ${(error as Error).message}`);
    }
  };

  const context = named(document.contexts, document["current-context"], "context");
  const cluster = named(document.clusters, context?.cluster, "cluster");
  const user = named(document.users, context?.user, "user");
  const server = text(cluster?.server);
  return {
    cluster:
      cluster && server
        ? {
            server,
            ca: bytes(cluster["certificate-authority-data"], cluster["certificate-authority"]),
            insecure: cluster["insecure-skip-tls-verify"] === true,
            tlsServerName: text(cluster["tls-server-name"]),
            proxyUrl: text(cluster["proxy-url"]),
          }
        : undefined,
    user: user
      ? {
          token: text(user.token),
          tokenFile: path(user.tokenFile ?? user["token-file"]),
          cert: bytes(user["client-certificate-data"], user["client-certificate"]),
          key: bytes(user["client-key-data"], user["client-key"]),
          username: text(user.username),
          password: typeof user.password === "string" ? user.password : undefined,
          as: text(user.as),
          asGroups: Array.isArray(user["as-groups"])
            ? (user["as-groups"] as unknown[]).filter((group): group is string => typeof group === "string")
            : undefined,
          needsClientNode: Boolean(user.exec || user["auth-provider"] || user["as-uid"] || user["as-user-extra"]),
        }
      : undefined,
  };
}
