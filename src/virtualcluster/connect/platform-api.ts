// What a virtual cluster asks of the platform, over the platform's Kubernetes-style API through
// @kubernetes/client-node (the platform is an API server like any other): who am I (selves), who is this credential
// (selves with spec.accessKey), and its VirtualClusterInstance with the status subresource.

import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { PlatformCredentials } from "./api-key-lookup.ts";

export const PLATFORM_GROUP = "management.platform.sh";
export const PLATFORM_VERSION = "v1";
/** The platform serves its API under this prefix of its host. */
export const PLATFORM_API_PREFIX = "/kubernetes/management";

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

/** The kubeconfig (in memory) that reaches the platform with these credentials. */
export function platformKubeConfig(credentials: PlatformCredentials): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      {
        name: "platform",
        server: `https://${credentials.host}${PLATFORM_API_PREFIX}`,
        caData: credentials.certificateAuthorityPem
          ? Buffer.from(credentials.certificateAuthorityPem).toString("base64")
          : undefined,
        skipTLSVerify: credentials.insecure,
      },
    ],
    users: [{ name: "virtualcluster", token: credentials.accessKey }],
    contexts: [{ name: "platform", cluster: "platform", user: "virtualcluster" }],
    currentContext: "platform",
  });
  return config;
}

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

export function createPlatformApi(credentials: PlatformCredentials): PlatformApi {
  const config = platformKubeConfig(credentials);
  const api = config.makeApiClient(CustomObjectsApi);
  const common = { group: PLATFORM_GROUP, version: PLATFORM_VERSION };
  const instances = { ...common, plural: "virtualclusterinstances" };
  const selves = async (accessKey?: string) => {
    const answer = (await api.createClusterCustomObject({
      ...common,
      plural: "selves",
      body: {
        apiVersion: `${PLATFORM_GROUP}/${PLATFORM_VERSION}`,
        kind: "Self",
        spec: accessKey === undefined ? {} : { accessKey },
      },
    })) as { status?: SelfStatus };
    return answer.status ?? {};
  };
  return {
    server: config.getCurrentCluster()?.server ?? "",
    self: () => selves(),
    review: (credential) => selves(credential),
    async getInstance(namespace, name) {
      try {
        return (await api.getNamespacedCustomObject({ ...instances, namespace, name })) as InstanceObject;
      } catch (error) {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      }
    },
    async createInstance(instance) {
      return (await api.createNamespacedCustomObject({
        ...instances,
        namespace: instance.metadata.namespace,
        body: instance,
        fieldManager: FIELD_MANAGER,
      })) as InstanceObject;
    },
    async patchInstance(namespace, name, patch) {
      return (await api.patchNamespacedCustomObject(
        { ...instances, namespace, name, body: patch, fieldManager: FIELD_MANAGER },
        mergePatch,
      )) as InstanceObject;
    },
    async patchInstanceStatus(namespace, name, status) {
      return (await api.patchNamespacedCustomObjectStatus(
        { ...instances, namespace, name, body: { status }, fieldManager: FIELD_MANAGER },
        mergePatch,
      )) as InstanceObject;
    },
  };
}

/** The Status message of a failed platform call (client-node puts the body in `body`), or the error's own text. */
export function platformErrorMessage(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  let parsed: unknown = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
  }
  const message = (parsed as { message?: unknown } | undefined)?.message;
  if (typeof message === "string" && message) return message;
  const code = (error as { code?: number }).code;
  const text = error instanceof Error ? error.message.split("\n")[0] : String(error);
  return code ? `HTTP ${code}: ${text}` : text;
}
