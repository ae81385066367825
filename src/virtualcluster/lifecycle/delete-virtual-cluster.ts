// Deleting a virtual cluster (`virtualcluster delete`): stop the runtime (it reports its instance offline), remove the
// platform objects (the instance `create` registered or the runtime registered itself, and the dedicated key) when
// logged in to that platform, then the host objects (synced objects and, in multi-namespace mode, the host
// namespaces holding them; the virtual cluster's own Service, API key Secret, ServiceAccount, RBAC, settings Secret
// last) and the local directory. Only objects labelled as made for this virtual cluster are deleted.

import { existsSync, readFileSync } from "node:fs";
import {
  needsSecretReaderRbac,
  platformRoleBindingName,
  platformRoleName,
  serviceAccountName,
} from "../connect/platform-rbac.ts";
import { type RuntimeStatus, readRuntimeStatus } from "../runtime-status.ts";
import { parseSettings } from "../settings/load.ts";
import { DEFAULT_API_KEY_SECRET } from "../settings/settings-schema.ts";
import type { VirtualClusterSettings } from "../settings/types.ts";
import { MANAGED_BY_LABEL } from "../translate/constants.ts";
import { stopClusterRuntime } from "./cluster-runtime.ts";
import { createdFor, HostCluster } from "./host-cluster.ts";
import { loadHostKubeconfig } from "./host-kubeconfig.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import { checkName, clusterPaths, type LocalCluster, readLocalCluster, removeLocalCluster } from "./local-clusters.ts";
import type { PlatformClient } from "./platform-client.ts";
import { deleteAccessKey, deleteInstance, getInstance } from "./platform-registration.ts";
import { type RunStep, runQuietly } from "./run-step.ts";
import { runtimeRoleName } from "./runtime-identity.ts";
import { registrationFromAnnotations, SETTINGS_KEY, settingsSecretName } from "./stored-settings.ts";

/** Platform objects of a virtual cluster (its instance, its dedicated access key). */
export interface PlatformLeftover {
  /** The platform's address (with or without scheme). */
  platform: string;
  instance?: { namespace: string; name: string };
  accessKey?: string;
}

const withoutScheme = (url: string) => url.replace(/^https?:\/\//, "").replace(/\/+$/, "");

export interface DeleteOptions {
  name: string;
  namespace: string;
  /** Kubeconfig of the host cluster (default: the copy create kept); needed without local state. */
  hostKubeconfig?: string;
  /** A client of the platform the user is logged in to: what it can reach there is removed too. */
  platform?: PlatformClient;
  step?: RunStep;
}

export interface DeleteResult {
  /** The runtime was running and was stopped. */
  stopped: boolean;
  /** How many objects the syncer had made on the host were deleted. */
  syncedDeleted: number;
  /** Something was removed from a platform. */
  removedFromPlatform: boolean;
  /** What could not be removed from a platform (another login, or the calls failed). */
  leftOnPlatform: PlatformLeftover[];
  /** The platform instances that stood for it (removed or not), e.g. to remove kube contexts made for them. */
  instances: { platform: string; namespace: string; name: string }[];
}

export async function deleteVirtualCluster(options: DeleteOptions): Promise<DeleteResult> {
  const { name, namespace } = options;
  const step = options.step ?? runQuietly;
  checkName("virtual cluster name", name);
  checkName("namespace", namespace);
  const paths = clusterPaths(namespace, name);
  const state = readLocalCluster(namespace, name);
  const notFound = (where: string) =>
    new LifecycleError(`virtual cluster ${name} not found in namespace ${namespace} ${where}`);
  // Without local state only an explicit host is searched: the current context may be anything (even a virtual
  // cluster after `connect`).
  if (!state && !options.hostKubeconfig) {
    throw notFound(
      "on this machine (see `virtualcluster list`); pass --host-kubeconfig to delete one created on another machine",
    );
  }
  const hostConfig = loadHostKubeconfig(
    options.hostKubeconfig ?? (existsSync(paths.hostKubeconfig) ? paths.hostKubeconfig : undefined),
  );
  using host = await HostCluster.open(hostConfig);
  const stored = await host.readSecret(namespace, settingsSecretName(name));
  const storedIsOurs = createdFor(stored?.metadata, name);
  if (!state && !storedIsOurs) throw notFound(`on the host cluster ${host.server}`);

  const status = readRuntimeStatus(paths.dir);
  const stopped = await step(`Stopping virtual cluster ${name}`, () => stopClusterRuntime(paths, state));

  const leftovers = platformLeftovers(state, stored?.metadata?.annotations, status, namespace, name);
  const registration = state?.registration ?? registrationFromAnnotations(stored?.metadata?.annotations);
  const instances = [
    ...(registration ? [{ platform: registration.platform, ...registration.instance }] : []),
    ...leftovers.flatMap((entry) => (entry.instance ? [{ platform: entry.platform, ...entry.instance }] : [])),
  ];
  const left = await step("Removing it from the platform", () =>
    cleanPlatform(options.platform, leftovers, namespace, name),
  );

  const settings = storedSettings(state, storedIsOurs ? stored?.data?.[SETTINGS_KEY] : undefined, namespace);
  const syncedDeleted = await step(`Deleting it from the host cluster ${host.server}`, async () => {
    const count = await host.deleteSynced(namespace, name);
    await deleteHostObjects(host, name, namespace, settings);
    if (storedIsOurs) {
      await host.remove(`Secret ${namespace}/${settingsSecretName(name)}`, () =>
        host.core.deleteNamespacedSecret({ namespace, name: settingsSecretName(name) }),
      );
    }
    return count;
  });
  removeLocalCluster(namespace, name);
  return {
    stopped,
    syncedDeleted,
    removedFromPlatform: leftovers.length > left.length,
    leftOnPlatform: left,
    instances,
  };
}

/** What may be on a platform for this virtual cluster: create's registration and the runtime's own instance. */
function platformLeftovers(
  state: LocalCluster | undefined,
  annotations: Record<string, string> | undefined,
  status: RuntimeStatus | undefined,
  namespace: string,
  name: string,
): PlatformLeftover[] {
  const found: PlatformLeftover[] = [];
  const registration = state?.registration ?? registrationFromAnnotations(annotations);
  if (registration) {
    found.push({
      platform: registration.platform,
      instance: registration.createdInstance ? registration.instance : undefined,
      accessKey: registration.accessKey,
    });
  }
  const own = status?.platform;
  if (own?.platform && own.instance && status?.namespace === namespace && status.name === name) {
    const same = found.find(
      (entry) =>
        withoutScheme(entry.platform) === withoutScheme(own.platform ?? "") &&
        entry.instance?.namespace === own.instance?.namespace &&
        entry.instance?.name === own.instance?.name,
    );
    if (!same) found.push({ platform: own.platform, instance: own.instance });
  }
  return found.filter((entry) => entry.instance || entry.accessKey);
}

/** Deletes what it can with the login's client; returns what is left. */
async function cleanPlatform(
  client: PlatformClient | undefined,
  leftovers: PlatformLeftover[],
  namespace: string,
  name: string,
): Promise<PlatformLeftover[]> {
  const login = client?.login;
  const left: PlatformLeftover[] = [];
  for (const leftover of leftovers) {
    if (!client || !login?.accessKey || withoutScheme(login.host) !== withoutScheme(leftover.platform)) {
      left.push(leftover);
      continue;
    }
    const remaining: PlatformLeftover = { platform: leftover.platform };
    if (leftover.instance) {
      const { namespace: instanceNamespace, name: instanceName } = leftover.instance;
      try {
        const instance = await getInstance(client, instanceNamespace, instanceName);
        const ref = instance?.spec?.clusterRef;
        // Only the instance that stands for this virtual cluster.
        if (instance?.spec?.external && ref?.namespace === namespace && ref.virtualCluster === name) {
          await deleteInstance(client, instanceNamespace, instanceName);
        }
      } catch {
        remaining.instance = leftover.instance;
      }
    }
    if (leftover.accessKey) {
      try {
        await deleteAccessKey(client, leftover.accessKey);
      } catch {
        remaining.accessKey = leftover.accessKey;
      }
    }
    if (remaining.instance || remaining.accessKey) left.push(remaining);
  }
  return left;
}

/** The settings the virtual cluster ran with (local copy, else the host's), to find the RBAC it asked for. */
function storedSettings(
  state: LocalCluster | undefined,
  encoded: string | undefined,
  namespace: string,
): VirtualClusterSettings | undefined {
  let text: string | undefined;
  if (state) {
    try {
      text = readFileSync(clusterPaths(state.namespace, state.name).settings, "utf8");
    } catch {
      // fall back to the host's copy
    }
  }
  text ??= encoded === undefined ? undefined : Buffer.from(encoded, "base64").toString("utf8");
  if (text === undefined) return undefined;
  try {
    return parseSettings(text, { namespace });
  } catch {
    return undefined;
  }
}

async function deleteHostObjects(
  host: HostCluster,
  name: string,
  namespace: string,
  settings: VirtualClusterSettings | undefined,
): Promise<void> {
  const { core, rbac } = host;
  const apiKeySecret = await host.readSecret(namespace, DEFAULT_API_KEY_SECRET);
  if (createdFor(apiKeySecret?.metadata, name)) {
    await host.remove(`Secret ${namespace}/${DEFAULT_API_KEY_SECRET}`, () =>
      core.deleteNamespacedSecret({ namespace, name: DEFAULT_API_KEY_SECRET }),
    );
  }
  const owner = await host.find(`Service ${namespace}/${name}`, () => core.readNamespacedService({ namespace, name }));
  if (createdFor(owner?.metadata, name)) {
    await host.remove(`Service ${namespace}/${name}`, () => core.deleteNamespacedService({ namespace, name }));
  }
  const account = serviceAccountName(name);
  const found = await host.find(`ServiceAccount ${namespace}/${account}`, () =>
    core.readNamespacedServiceAccount({ namespace, name: account }),
  );
  if (createdFor(found?.metadata, name)) {
    await host.remove(`ServiceAccount ${namespace}/${account}`, () =>
      core.deleteNamespacedServiceAccount({ namespace, name: account }),
    );
  }
  for (const multiNamespace of [false, true]) {
    const roleName = runtimeRoleName(name, namespace, multiNamespace);
    if (multiNamespace) {
      const role = await host.find(`ClusterRole ${roleName}`, () => rbac.readClusterRole({ name: roleName }));
      if (!createdFor(role?.metadata, name)) continue;
      await host.remove(`ClusterRoleBinding ${roleName}`, () => rbac.deleteClusterRoleBinding({ name: roleName }));
      await host.remove(`ClusterRole ${roleName}`, () => rbac.deleteClusterRole({ name: roleName }));
    } else {
      const role = await host.find(`Role ${namespace}/${roleName}`, () =>
        rbac.readNamespacedRole({ namespace, name: roleName }),
      );
      if (!createdFor(role?.metadata, name)) continue;
      await host.remove(`RoleBinding ${namespace}/${roleName}`, () =>
        rbac.deleteNamespacedRoleBinding({ namespace, name: roleName }),
      );
      await host.remove(`Role ${namespace}/${roleName}`, () =>
        rbac.deleteNamespacedRole({ namespace, name: roleName }),
      );
    }
  }
  const apiKey = settings?.external.platform?.apiKey;
  const secretNamespace = apiKey?.namespace || namespace;
  if (!apiKey || !needsSecretReaderRbac(apiKey.createRBAC, secretNamespace, namespace)) return;
  const role = platformRoleName(name, namespace);
  const binding = platformRoleBindingName(name, namespace);
  const current = await host.find(`Role ${secretNamespace}/${role}`, () =>
    rbac.readNamespacedRole({ namespace: secretNamespace, name: role }),
  );
  if (current?.metadata?.labels?.[MANAGED_BY_LABEL] !== name) return;
  await host.remove(`RoleBinding ${secretNamespace}/${binding}`, () =>
    rbac.deleteNamespacedRoleBinding({ namespace: secretNamespace, name: binding }),
  );
  await host.remove(`Role ${secretNamespace}/${role}`, () =>
    rbac.deleteNamespacedRole({ namespace: secretNamespace, name: role }),
  );
}
