// How the runtime reaches a Kubernetes API server (the host cluster, its own control plane, the platform): a base URL
// and, per request, the agent, TLS and authentication options for node:http(s).
//
// Why not @kubernetes/client-node: its module graph alone holds about 35 MB of the runtime's memory, and its
// per-request machinery (typed model (de)serialization, fetch streams) was the runtime's largest CPU cost in a sync
// burst. Plain kubeconfigs (tokens, token files, client certificates, basic auth) are read here; anything else
// (exec plugins, auth providers, proxies, impersonated uids and extras, several KUBECONFIG files) is handed to client-node, loaded
// only then, so every kubeconfig client-node accepts still works. Impersonation (`as`, `as-groups`) is sent here.

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Agent as HttpAgent, RequestOptions } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { isIP, connect as netConnect, type Socket } from "node:net";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { http } from "../../utils/node-http.ts";
import { type ClusterEntry, parseKubeconfig, type UserEntry } from "./kubeconfig-file.ts";

export interface KubeAccess {
  /** The API server's base URL without a trailing slash (it may carry a path prefix). */
  readonly server: string;
  /** Options for one request: the pooled agent, TLS and the authentication headers. */
  requestOptions(): Promise<RequestOptions>;
  /**
   * A new connection to the server with the access's TLS settings, for a client that speaks HTTP/1.1 itself
   * (kept-alive-connections.ts); absent where connections are not plain (a proxy, or options only client-node knows).
   */
  connect?(): Socket;
  /** Closes the pooled connections (open watches end). */
  close(): void;
}

/** The in-cluster ServiceAccount files (a runtime running in a Pod of the host cluster). */
const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** Token files are re-read this often: projected ServiceAccount tokens rotate (client-go does the same). */
const TOKEN_FILE_REFRESH_MS = 60_000;

export interface TlsSettings {
  /** PEM bundle to trust instead of the system's roots. */
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  insecure?: boolean;
  servername?: string;
}

export type Credential =
  | { kind: "none" }
  | { kind: "token"; token: string }
  | { kind: "tokenFile"; path: string }
  | { kind: "basic"; username: string; password: string };

export interface DirectAccessOptions {
  server: string;
  tls?: TlsSettings;
  credential?: Credential;
  /** Impersonation: every request acts as this user (and groups), as kubectl --as does. */
  impersonate?: { user: string; groups?: string[] };
}

/**
 * An HTTPS agent whose TLS settings are its own options, which override a request's (Node merges them over the
 * request's): its pools are told apart by address alone. Node's getName() appends the CA, certificate and key texts
 * (kilobytes) to the address, and builds and hashes that key for every request and every socket freed, a visible part
 * of the syncer's client CPU in a burst.
 */
class FixedTlsAgent extends HttpsAgent {
  override getName(options?: Parameters<HttpAgent["getName"]>[0]): string {
    return `${http.Agent.prototype.getName.call(this, options)}:tls`;
  }
}

/** Node's TLS options for the settings (Node derives the server name from the host when none is given). */
const tlsOptions = (tls: TlsSettings) => ({
  ca: tls.ca,
  cert: tls.cert,
  key: tls.key,
  rejectUnauthorized: !tls.insecure,
  servername: tls.servername,
});

/** Keep-alive agents: a sync burst reuses a few connections instead of a TLS handshake per request. */
function keepAliveAgent(server: string, tls: TlsSettings): HttpAgent {
  if (server.startsWith("http:")) return new http.Agent({ keepAlive: true });
  return new FixedTlsAgent({ keepAlive: true, ...tlsOptions(tls) });
}

/** New connections to `server` as keepAliveAgent's make them (the host name checked against the certificate). */
function connector(server: string, tls: TlsSettings): () => Socket {
  const url = new URL(server);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (url.protocol === "http:") return () => netConnect({ host, port: Number(url.port || 80), noDelay: true });
  const options = {
    ...tlsOptions(tls),
    host,
    port: Number(url.port || 443),
    servername: tls.servername ?? (isIP(host) ? undefined : host),
  };
  return () => tlsConnect(options).setNoDelay(true);
}

/** Access with everything known up front: a token (or token file), a client certificate, or basic auth. */
export function directAccess(options: DirectAccessOptions): KubeAccess {
  const server = options.server.replace(/\/+$/, "");
  if (server.startsWith("http:") && !options.tls?.insecure) {
    throw new Error(`${server}: plain http is only allowed with insecure-skip-tls-verify`);
  }
  const agent = keepAliveAgent(server, options.tls ?? {});
  const credential = options.credential ?? { kind: "none" };
  let fileToken: { value: string; readAt: number } | undefined;
  const authorization = async (): Promise<string | undefined> => {
    switch (credential.kind) {
      case "token":
        return `Bearer ${credential.token}`;
      case "basic":
        return `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString("base64")}`;
      case "tokenFile": {
        if (!fileToken || Date.now() - fileToken.readAt > TOKEN_FILE_REFRESH_MS) {
          fileToken = { value: (await readFile(credential.path, "utf8")).trim(), readAt: Date.now() };
        }
        return `Bearer ${fileToken.value}`;
      }
      case "none":
        return undefined;
    }
  };
  const access: KubeAccess = {
    server,
    async requestOptions() {
      const value = await authorization();
      return { agent, headers: value ? { authorization: value } : {} };
    },
    connect: connector(server, options.tls ?? {}),
    close: () => agent.destroy(),
  };
  return options.impersonate ? impersonating(access, options.impersonate) : access;
}

/** The same access acting as another user (Impersonate-User, Impersonate-Group): the server's RBAC checks it may. */
export function impersonating(access: KubeAccess, as: { user: string; groups?: string[] }): KubeAccess {
  return {
    server: access.server,
    async requestOptions() {
      const options = await access.requestOptions();
      const headers: Record<string, string | string[]> = { ...(options.headers as Record<string, string>) };
      headers["impersonate-user"] = as.user;
      if (as.groups?.length) headers["impersonate-group"] = as.groups;
      return { ...options, headers };
    },
    connect: access.connect,
    close: () => access.close(),
  };
}

export interface LoadKubeAccessOptions {
  /** A kubeconfig file; without one: KUBECONFIG, then ~/.kube/config, then the in-cluster ServiceAccount. */
  file?: string;
  env?: NodeJS.ProcessEnv;
}

/** Thrown when no kubeconfig can be found or read; the message says which and why. */
export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KubeconfigError";
  }
}

/** Loads access to the cluster of a kubeconfig's current context, as kubectl would find it. */
export async function loadKubeAccess(options: LoadKubeAccessOptions = {}): Promise<KubeAccess> {
  const env = options.env ?? process.env;
  if (options.file) return fromFile(options.file);
  const files = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
  if (files.length === 1) return fromFile(files[0]);
  if (files.length > 1) return clientNodeAccess((config) => config.loadFromDefault());
  const home = env.HOME || homedir();
  const file = home ? join(home, ".kube", "config") : undefined;
  if (file && existsSync(file)) return fromFile(file);
  if (env.KUBERNETES_SERVICE_HOST && existsSync(join(SERVICE_ACCOUNT_DIR, "token"))) return inCluster(env);
  throw new KubeconfigError(
    "no kubeconfig found: pass one, set KUBECONFIG, create ~/.kube/config or run in a Pod with a ServiceAccount",
  );
}

async function fromFile(file: string): Promise<KubeAccess> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new KubeconfigError(`cannot read kubeconfig ${file}: ${(error as Error).message}`);
  }
  const { cluster, user } = parseKubeconfig(text, file);
  if (!cluster) throw new KubeconfigError(`the kubeconfig ${file} has no current cluster`);
  const plain = plainAccess(cluster, user);
  if (plain) return plain;
  return clientNodeAccess((config) => config.loadFromFile(file));
}

/**
 * Access to the current context of kubeconfig text whose paths are absolute (`origin` names it in errors): a
 * kubeconfig document made from another, as `virtualcluster create` keeps the host's current context.
 */
export async function kubeAccessFromText(text: string, origin: string): Promise<KubeAccess> {
  let parsed: ReturnType<typeof parseKubeconfig>;
  try {
    parsed = parseKubeconfig(text, origin);
  } catch (error) {
    throw new KubeconfigError((error as Error).message);
  }
  if (!parsed.cluster) throw new KubeconfigError(`the kubeconfig ${origin} has no current cluster`);
  return plainAccess(parsed.cluster, parsed.user) ?? clientNodeAccess((config) => config.loadFromString(text));
}

/** Direct access for the common kubeconfigs; undefined when client-node must handle the entry. */
function plainAccess(cluster: ClusterEntry, user: UserEntry | undefined): KubeAccess | undefined {
  if (cluster.proxyUrl || user?.needsClientNode) return undefined;
  const tls: TlsSettings = {
    ca: cluster.ca,
    cert: user?.cert,
    key: user?.key,
    insecure: cluster.insecure,
    servername: cluster.tlsServerName,
  };
  let credential: Credential = { kind: "none" };
  if (user?.token) credential = { kind: "token", token: user.token };
  else if (user?.tokenFile) credential = { kind: "tokenFile", path: user.tokenFile };
  else if (user?.username !== undefined) {
    credential = { kind: "basic", username: user.username, password: user.password ?? "" };
  }
  const impersonate = user?.as ? { user: user.as, groups: user.asGroups } : undefined;
  return directAccess({ server: cluster.server, tls, credential, impersonate });
}

async function inCluster(env: NodeJS.ProcessEnv): Promise<KubeAccess> {
  const host = env.KUBERNETES_SERVICE_HOST ?? "";
  const port = env.KUBERNETES_SERVICE_PORT || "443";
  return directAccess({
    server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    tls: { ca: await readFile(join(SERVICE_ACCOUNT_DIR, "ca.crt")) },
    credential: { kind: "tokenFile", path: join(SERVICE_ACCOUNT_DIR, "token") },
  });
}

type ClientNodeConfig = import("@kubernetes/client-node").KubeConfig;

/**
 * Access through client-node's KubeConfig (exec plugins, auth providers, proxies, impersonation): it fills in each
 * request's TLS fields and headers; a keep-alive agent is built from those TLS fields unless a proxy agent is needed.
 */
async function clientNodeAccess(load: (config: ClientNodeConfig) => void): Promise<KubeAccess> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const config = new KubeConfig();
  try {
    load(config);
  } catch (error) {
    throw new KubeconfigError(`cannot load the kubeconfig: ${(error as Error).message}`);
  }
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new KubeconfigError("the kubeconfig has no current cluster");
  let pooled: { agent: HttpAgent; tls: TlsSettings } | undefined;
  const server = cluster.server.replace(/\/+$/, "");
  return {
    server,
    async requestOptions() {
      const options: RequestOptions & TlsSettings & { rejectUnauthorized?: boolean } = { headers: {} };
      await config.applyToHTTPSOptions(options as never);
      if (cluster.proxyUrl) return options;
      const tls: TlsSettings = {
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        insecure: options.rejectUnauthorized === false,
        servername: options.servername,
      };
      // client-node reads the files again for every request: compare contents, not Buffer identities.
      const same =
        pooled &&
        sameBytes(pooled.tls.ca, tls.ca) &&
        sameBytes(pooled.tls.cert, tls.cert) &&
        sameBytes(pooled.tls.key, tls.key) &&
        pooled.tls.insecure === tls.insecure;
      if (!same) {
        pooled?.agent.destroy();
        pooled = { agent: keepAliveAgent(server, tls), tls };
      }
      return { ...options, agent: pooled?.agent };
    },
    close: () => pooled?.agent.destroy(),
  };
}

function sameBytes(a: string | Buffer | undefined, b: string | Buffer | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return Buffer.from(a).equals(Buffer.from(b));
}
