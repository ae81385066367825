// What `create`, `delete` and `connect` do on the platform with the stored login: check it, find or register a
// virtual cluster's instance (external: true) in its project, make the dedicated access key with the role
// `virtualcluster` for that project, and the default API key Secret the runtime reads it from (spec flow 4).

import type { V1Secret } from "@kubernetes/client-node";
import { DEFAULT_API_KEY_SECRET } from "../settings/settings-schema.ts";
import { createdLabels } from "./host-cluster.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import { API_GROUP_PATH, type PlatformClient, PlatformError, type SelfObject } from "./platform-client.ts";

export const GROUP_VERSION = "management.platform.sh/v1";
export const DEFAULT_PROJECT = "default";

export interface InstanceObject {
  metadata: { name: string; namespace: string; uid?: string; creationTimestamp?: string };
  spec?: {
    displayName?: string;
    external?: boolean;
    clusterRef?: { namespace?: string; virtualCluster?: string };
    template?: { accessPoint?: { ingress?: { enabled?: boolean; host?: string } } };
  };
  status?: { online?: boolean; phase?: string; lastHeartbeatTime?: string };
}

/** POST selves; a rejected key or an unreachable platform says to log in again. */
export async function checkLogin(client: PlatformClient): Promise<SelfObject> {
  try {
    return await client.self();
  } catch (error) {
    if (error instanceof PlatformError && error.code === 401) {
      throw new LifecycleError(
        `the platform at ${client.login.host} rejected the stored access key (${error.message}): run \`virtualcluster platform login\` again`,
      );
    }
    throw error;
  }
}

export function projectNamespace(self: SelfObject, project: string): string {
  return `${self.status?.projectNamespacePrefix ?? "p-"}${project}`;
}

const instancePath = (namespace: string, name?: string) =>
  `${API_GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/virtualclusterinstances${name ? `/${encodeURIComponent(name)}` : ""}`;

async function orNotFound<T>(work: Promise<T>): Promise<T | undefined> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof PlatformError && error.code === 404) return undefined;
    throw error;
  }
}

export function getInstance(client: PlatformClient, namespace: string, name: string) {
  return orNotFound(client.request<InstanceObject>("GET", instancePath(namespace, name)));
}

/** Instances named `name` in every project the login can see. */
export async function findInstances(client: PlatformClient, name: string): Promise<InstanceObject[]> {
  const query = new URLSearchParams({ fieldSelector: `metadata.name=${name}` });
  const list = await client.request<{ items?: InstanceObject[] }>(
    "GET",
    `${API_GROUP_PATH}/virtualclusterinstances?${query}`,
  );
  return list.items ?? [];
}

export interface InstanceTarget {
  namespace: string;
  name: string;
  /** The virtual cluster's host namespace (the instance's clusterRef). */
  hostNamespace: string;
  project: string;
}

/** Whether an instance stands for this virtual cluster (or for none yet). */
function belongsTo(instance: InstanceObject, target: InstanceTarget): boolean {
  const ref = instance.spec?.clusterRef;
  return (
    (!ref?.namespace || ref.namespace === target.hostNamespace) &&
    (!ref?.virtualCluster || ref.virtualCluster === target.name)
  );
}

/** Finds the instance or registers it; an instance of another virtual cluster with that name is an error. */
export async function ensureInstance(client: PlatformClient, target: InstanceTarget): Promise<{ created: boolean }> {
  const { namespace, name, hostNamespace, project } = target;
  const current = await getInstance(client, namespace, name);
  if (current) {
    if (!belongsTo(current, target)) {
      const ref = current.spec?.clusterRef;
      throw new LifecycleError(
        `project ${project} already has a virtual cluster "${name}" (namespace ${ref?.namespace}): choose another name or --project`,
      );
    }
    return { created: false };
  }
  try {
    await client.request("POST", instancePath(namespace), {
      body: {
        apiVersion: GROUP_VERSION,
        kind: "VirtualClusterInstance",
        metadata: { name, namespace },
        spec: { displayName: name, external: true, clusterRef: { namespace: hostNamespace, virtualCluster: name } },
      },
    });
  } catch (error) {
    if (error instanceof PlatformError && error.code === 409) return { created: false };
    throw new LifecycleError(
      `cannot register virtual cluster ${name} in project ${project}: ${error instanceof Error ? error.message : error}`,
    );
  }
  return { created: true };
}

/** A new access key with the role `virtualcluster` for the one project. Returns its object name and the key. */
export async function createDedicatedKey(
  client: PlatformClient,
  target: InstanceTarget,
): Promise<{ name: string; key: string }> {
  const { name, hostNamespace, project } = target;
  const created = await client.request<{ metadata?: { name?: string }; spec?: { key?: string } }>(
    "POST",
    `${API_GROUP_PATH}/ownedaccesskeys`,
    {
      body: {
        apiVersion: GROUP_VERSION,
        kind: "OwnedAccessKey",
        metadata: { generateName: `vc-${name.slice(0, 40).replace(/-+$/, "")}-` },
        spec: {
          type: "User",
          displayName: `virtual cluster ${hostNamespace}/${name}`,
          description: `Dedicated key of the virtual cluster ${name} in host namespace ${hostNamespace}, made by \`virtualcluster create\`.`,
          scope: { roles: [{ role: "virtualcluster", projects: [project] }] },
        },
      },
    },
  );
  const keyName = created.metadata?.name;
  const key = created.spec?.key;
  if (!keyName || !key) throw new LifecycleError("the platform created an access key but returned no key");
  return { name: keyName, key };
}

export async function accessKeyExists(client: PlatformClient, name: string): Promise<boolean> {
  const key = await orNotFound(client.request("GET", `${API_GROUP_PATH}/ownedaccesskeys/${encodeURIComponent(name)}`));
  return key !== undefined;
}

export async function deleteAccessKey(client: PlatformClient, name: string): Promise<void> {
  await orNotFound(client.request("DELETE", `${API_GROUP_PATH}/ownedaccesskeys/${encodeURIComponent(name)}`));
}

export async function deleteInstance(client: PlatformClient, namespace: string, name: string): Promise<void> {
  await orNotFound(client.request("DELETE", instancePath(namespace, name)));
}

/** The default API key Secret in the host namespace (spec: accessKey and host; plus the connection details). */
export function apiKeySecret(options: {
  name: string;
  namespace: string;
  platform: string;
  insecure?: boolean;
  certificateAuthorityData?: string;
  project: string;
  accessKey: string;
}): V1Secret {
  const stringData: Record<string, string> = {
    accessKey: options.accessKey,
    host: options.platform.replace(/^https?:\/\//, ""),
    project: options.project,
    insecure: options.insecure ? "true" : "false",
    name: options.name,
  };
  if (options.certificateAuthorityData) stringData.certificateAuthorityData = options.certificateAuthorityData;
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: { name: DEFAULT_API_KEY_SECRET, namespace: options.namespace, labels: createdLabels(options.name) },
    stringData,
  };
}
