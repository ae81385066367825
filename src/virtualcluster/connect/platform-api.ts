// What a virtual cluster asks of the platform, over the platform's Kubernetes-style API (the platform is an API
// server like any other): who am I (selves), who is this credential (selves with spec.accessKey), and its
// VirtualClusterInstance with the status subresource.

import { directAccess } from "../kube/kube-access.ts";
import { KubeApiError } from "../kube/kube-api-error.ts";
import { KubeHttp, type KubeHttpOptions } from "../kube/kube-http.ts";
import type { PlatformCredentials } from "./api-key-lookup.ts";
import { PLATFORM_API_PREFIX } from "./platform-api-prefix.ts";

export const PLATFORM_GROUP = "management.platform.sh";
export const PLATFORM_VERSION = "v1";
export { PLATFORM_API_PREFIX };

export interface SelfStatus {
  user?: { name?: string; username?: string; displayName?: string; teams?: { name?: string }[] };
  team?: { name?: string; username?: string };
  accessKey?: string;
  accessKeyScope?: AccessKeyScope;
  accessKeyType?: string;
  /** When the credential stops authenticating by its lifetime alone (RFC 3339). */
  accessKeyExpirationTimestamp?: string;
  subject?: string;
  uid?: string;
  groups?: string[];
  platformHost?: string;
  projectNamespacePrefix?: string;
  /** How often the platform wants connected virtual clusters to report. */
  instanceHeartbeatSeconds?: number;
}

export interface AccessKeyScope {
  roles?: { role?: string; projects?: (string | { project?: string })[]; virtualClusters?: string[] }[];
  projects?: { project?: string }[];
  virtualClusters?: { project?: string; virtualCluster?: string }[];
  clusters?: { cluster?: string }[];
  allowPlatformCli?: boolean;
}

export interface InstanceObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string; uid?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface PlatformApi {
  readonly server: string;
  self(): Promise<SelfStatus>;
  /** Token review: describes another access key or direct cluster endpoint token. */
  review(credential: string): Promise<SelfStatus>;
  getInstance(namespace: string, name: string): Promise<InstanceObject | undefined>;
  createInstance(instance: InstanceObject): Promise<InstanceObject>;
  patchInstance(namespace: string, name: string, patch: Record<string, unknown>): Promise<InstanceObject>;
  patchInstanceStatus(namespace: string, name: string, status: Record<string, unknown>): Promise<InstanceObject>;
}

const FIELD_MANAGER = "virtualcluster";

const MERGE_PATCH = "application/merge-patch+json";

/** HTTP access to the platform's API with these credentials (its own keep-alive pool: close it when done). */
export function platformHttp(credentials: PlatformCredentials, options: KubeHttpOptions = {}): KubeHttp {
  return new KubeHttp(
    directAccess({
      server: `https://${credentials.host}${PLATFORM_API_PREFIX}`,
      tls: { ca: credentials.certificateAuthorityPem, insecure: credentials.insecure },
      credential: { kind: "token", token: credentials.accessKey },
    }),
    options,
  );
}

export function createPlatformApi(credentials: PlatformCredentials): PlatformApi {
  const http = platformHttp(credentials);
  const server = http.access.server;
  const base = `/apis/${PLATFORM_GROUP}/${PLATFORM_VERSION}`;
  const instance = (namespace: string, name: string) =>
    `${base}/namespaces/${encodeURIComponent(namespace)}/virtualclusterinstances/${encodeURIComponent(name)}`;
  const fieldManager = { fieldManager: FIELD_MANAGER };
  const selves = async (accessKey?: string) => {
    const answer = await http.request<{ status?: SelfStatus }>({
      method: "POST",
      path: `${base}/selves`,
      body: {
        apiVersion: `${PLATFORM_GROUP}/${PLATFORM_VERSION}`,
        kind: "Self",
        spec: accessKey === undefined ? {} : { accessKey },
      },
    });
    return answer.status ?? {};
  };
  return {
    server,
    self: () => selves(),
    review: (credential) => selves(credential),
    async getInstance(namespace, name) {
      try {
        return await http.request<InstanceObject>({ method: "GET", path: instance(namespace, name) });
      } catch (error) {
        if (error instanceof KubeApiError && error.code === 404) return undefined;
        throw error;
      }
    },
    createInstance: (created) =>
      http.request<InstanceObject>({
        method: "POST",
        path: `${base}/namespaces/${encodeURIComponent(created.metadata.namespace)}/virtualclusterinstances`,
        query: fieldManager,
        body: created,
      }),
    patchInstance: (namespace, name, patch) =>
      http.request<InstanceObject>({
        method: "PATCH",
        path: instance(namespace, name),
        query: fieldManager,
        body: patch,
        contentType: MERGE_PATCH,
      }),
    patchInstanceStatus: (namespace, name, status) =>
      http.request<InstanceObject>({
        method: "PATCH",
        path: `${instance(namespace, name)}/status`,
        query: fieldManager,
        body: { status },
        contentType: MERGE_PATCH,
      }),
  };
}

/** True when a call failed before any answer came (connection refused, DNS, TLS, reset). */
export function isUnreachable(error: unknown): boolean {
  return !(error instanceof KubeApiError);
}

/**
 * The platform's own Status message of a failed call; "platform unreachable (<cause>)" when no answer came;
 * "HTTP <code>" when the answer had no message.
 */
export function platformErrorMessage(error: unknown): string {
  if (error instanceof KubeApiError) {
    const message = error.status?.message;
    return typeof message === "string" && message ? message : `HTTP ${error.code}`;
  }
  // Network and TLS failures carry a code (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT, ...).
  const failure = error as { code?: unknown; message?: unknown } | undefined;
  const detail = typeof failure?.code === "string" ? failure.code : String(failure?.message ?? error);
  return `platform unreachable (${detail.split("\n")[0]})`;
}
