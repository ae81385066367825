// What `virtualcluster create` does on the platform: decide whether to register the virtual cluster (and in which
// project), then register its instance with a dedicated access key kept in the default API key Secret of the host
// namespace. Whatever a run makes is added to its undo list, so a failed create leaves nothing behind.

import { DEFAULT_API_KEY_SECRET } from "../settings/settings-schema.ts";
import type { VirtualClusterSettings } from "../settings/types.ts";
import { CLUSTER_LABEL, createdFor, type HostCluster } from "./host-cluster.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import type { PlatformRegistration } from "./local-clusters.ts";
import type { PlatformClient } from "./platform-client.ts";
import type { PlatformLogin } from "./platform-login.ts";
import {
  accessKeyExists,
  apiKeySecret,
  createDedicatedKey,
  DEFAULT_PROJECT,
  deleteAccessKey,
  deleteInstance,
  ensureInstance,
} from "./platform-registration.ts";

export interface RegistrationPlan {
  /** Register with the platform and write the default API key Secret. */
  register: boolean;
  project: string;
  /** Said once the virtual cluster runs. */
  notes: string[];
}

/** Whether to register with the platform, in which project, and why not. */
export async function planPlatform(
  name: string,
  namespace: string,
  settings: VirtualClusterSettings,
  requestedProject: string | undefined,
  login: PlatformLogin | undefined,
  host: HostCluster,
): Promise<RegistrationPlan> {
  const platform = settings.external.platform;
  const project = requestedProject ?? platform?.project ?? DEFAULT_PROJECT;
  const notes: string[] = [];
  const loggedIn = Boolean(login?.accessKey);
  if (!loggedIn || platform?.apiKey) {
    if (requestedProject !== undefined && !platform) {
      throw new LifecycleError(
        "--project needs a platform: log in with `virtualcluster platform login`, or set external.platform in the settings",
      );
    }
    return { register: false, project, notes };
  }
  // Dedicated key: the runtime reads the default Secret of its namespace; one namespace holds one such Secret.
  const current = await host.readSecret(namespace, DEFAULT_API_KEY_SECRET);
  if (current && !createdFor(current.metadata, name)) {
    const owner = current.metadata?.labels?.[CLUSTER_LABEL];
    if (owner) {
      throw new LifecycleError(
        `namespace ${namespace} already holds the platform API key Secret of virtual cluster ${owner}: create ${name} in another namespace, or set external.platform.apiKey in the settings`,
      );
    }
    notes.push(`the platform access key comes from the existing Secret ${namespace}/${DEFAULT_API_KEY_SECRET}`);
    return { register: false, project, notes };
  }
  return { register: true, project, notes };
}

export interface RegisterOptions {
  name: string;
  namespace: string;
  project: string;
  instanceNamespace: string;
  previous?: PlatformRegistration;
  undo: (() => Promise<unknown>)[];
}

/** Instance, dedicated key and default Secret; an earlier key is kept while it still exists. */
export async function register(
  client: PlatformClient,
  login: PlatformLogin,
  host: HostCluster,
  options: RegisterOptions,
): Promise<PlatformRegistration> {
  const { name, namespace, project, instanceNamespace, previous, undo } = options;
  const target = { namespace: instanceNamespace, name, hostNamespace: namespace, project };
  const { created } = await ensureInstance(client, target);
  if (created) undo.push(() => deleteInstance(client, instanceNamespace, name));
  const sameInstance =
    previous?.platform === login.host &&
    previous.instance.namespace === instanceNamespace &&
    previous.instance.name === name;
  const secret = await host.readSecret(namespace, DEFAULT_API_KEY_SECRET);
  let accessKey = previous?.accessKey;
  const keep =
    sameInstance &&
    accessKey !== undefined &&
    createdFor(secret?.metadata, name) &&
    (await accessKeyExists(client, accessKey));
  if (!keep) {
    const key = await createDedicatedKey(client, target);
    undo.push(() => deleteAccessKey(client, key.name));
    await host.applySecret(
      apiKeySecret({
        name,
        namespace,
        platform: login.host,
        insecure: login.insecure,
        certificateAuthorityData: login.certificateAuthorityData,
        project,
        accessKey: key.key,
      }),
    );
    if (!secret)
      undo.push(() =>
        host.remove("the API key Secret", () =>
          host.core.deleteNamespacedSecret({ namespace, name: DEFAULT_API_KEY_SECRET }),
        ),
      );
    // The key the Secret held before is replaced: it must not keep working.
    if (accessKey && sameInstance) await deleteAccessKey(client, accessKey).catch(() => {});
    accessKey = key.name;
  }
  return {
    platform: login.host,
    project,
    instance: { namespace: instanceNamespace, name },
    createdInstance: created || (sameInstance && previous?.createdInstance === true),
    accessKey,
  };
}
