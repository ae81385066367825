// What a virtual cluster asks of the platform, over the platform's Kubernetes-style API through
// @kubernetes/client-node (the platform is an API server like any other): who am I (selves), who is this credential
// (selves with spec.accessKey), and its VirtualClusterInstance with the status subresource.

import {
  ApiException,
  CustomObjectsApi,
  createConfiguration,
  KubeConfig,
  PatchStrategy,
  type ResponseContext,
  ServerConfiguration,
  setHeaderOptions,
} from "@kubernetes/client-node";
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

/**
 * Bodies of failed responses, by the response's headers object (the one ApiException keeps): client-node drops the
 * body of the status codes its API description declares (401, 403), and with it the platform's Status message.
 */
const errorBodies = new WeakMap<object, string>();

const keepErrorBodies = {
  pre: async <T>(context: T) => context,
  post: async (response: ResponseContext) => {
    if (response.httpStatusCode < 400) return response;
    const text = await response.body.text();
    errorBodies.set(response.headers, text);
    response.body = { text: async () => text, binary: async () => Buffer.from(text) } as ResponseContext["body"];
    return response;
  },
};

export function createPlatformApi(credentials: PlatformCredentials): PlatformApi {
  const config = platformKubeConfig(credentials);
  const api = new CustomObjectsApi(
    createConfiguration({
      baseServer: new ServerConfiguration(config.getCurrentCluster()?.server ?? "", {}),
      authMethods: { default: config },
      promiseMiddleware: [keepErrorBodies as never],
    }),
  );
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

/** True when a call failed before any answer came (connection refused, DNS, TLS, reset). */
export function isUnreachable(error: unknown): boolean {
  return !(error instanceof ApiException) && (error as { code?: unknown })?.code === undefined;
}

/**
 * The platform's own Status message of a failed call; "platform unreachable (<cause>)" when no answer came;
 * "HTTP <code>" when the answer had no message.
 */
export function platformErrorMessage(error: unknown): string {
  if (error instanceof ApiException) {
    const text = typeof error.body === "string" ? error.body : errorBodies.get(error.headers as object);
    let message: unknown;
    try {
      message = (JSON.parse(text ?? "") as { message?: unknown })?.message;
    } catch {
      message = undefined;
    }
    return typeof message === "string" && message ? message : `HTTP ${error.code}`;
  }
  if (isUnreachable(error)) {
    const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
    const detail = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
    return `platform unreachable (${detail})`;
  }
  return error instanceof Error ? error.message.split("\n")[0] : String(error);
}
