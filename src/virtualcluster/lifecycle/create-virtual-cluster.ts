// Creating or upgrading a virtual cluster (`virtualcluster create`): everything is checked before anything is written
// (settings, host access, the platform login, name clashes); then the host gets the namespace, the ServiceAccount, the
// virtual cluster's own Service (owner of the synced objects), the RBAC the settings ask for, the default API key
// Secret when the virtual cluster is registered on the platform (create-registration.ts), and last the settings
// Secret, whose presence means "this virtual cluster exists". Platform
// objects made by a run that fails before that are removed again. Finally the runtime is (re)started in the background
// and waited for.

import { existsSync } from "node:fs";
import type { V1Secret } from "@kubernetes/client-node";
import { ensureSecretReaderRbac, needsSecretReaderRbac, serviceAccountName } from "../connect/platform-rbac.ts";
import type { RuntimeStatus } from "../runtime-status.ts";
import { isMultiNamespace } from "../settings/multi-namespace.ts";
import type { VirtualClusterSettings } from "../settings/types.ts";
import { startClusterRuntime, stopClusterRuntime } from "./cluster-runtime.ts";
import { planPlatform, register } from "./create-registration.ts";
import { createdFor, createdLabels, HostCluster } from "./host-cluster.ts";
import { loadHostKubeconfig } from "./host-kubeconfig.ts";
import { LifecycleError } from "./lifecycle-error.ts";
import {
  checkName,
  clusterPaths,
  ensureClusterDir,
  type LocalCluster,
  type PlatformRegistration,
  readLocalCluster,
  writeLocalCluster,
  writePrivateFile,
} from "./local-clusters.ts";
import { freePort, waitUntilReady } from "./local-runtime.ts";
import type { PlatformClient } from "./platform-client.ts";
import { checkLogin, projectNamespace } from "./platform-registration.ts";
import { type RunStep, runQuietly } from "./run-step.ts";
import { checkRuntimeImage, type RuntimeContainer } from "./runtime-container.ts";
import { ensureRuntimeRbac, runtimeKubeconfig } from "./runtime-identity.ts";
import { type SettingsChanges, settingsChanges } from "./settings-changes.ts";
import { checkSettings, editSettings, readSettings } from "./settings-file.ts";
import {
  registrationAnnotations,
  registrationFromAnnotations,
  SETTINGS_KEY,
  settingsSecretName,
} from "./stored-settings.ts";

const LISTEN_HOST = "127.0.0.1";

export interface CreateOptions {
  name: string;
  /** The host namespace (created when missing). */
  namespace: string;
  /** The settings file (virtualcluster.yaml); without one the defaults apply. */
  settingsFile?: string;
  /** Apply new settings to an existing virtual cluster and restart it (creates it when missing). */
  upgrade?: boolean;
  /** With upgrade and no settings file: drop the stored settings (without it they are kept). */
  resetSettings?: boolean;
  /** Platform project to register in (default: the settings' project, else `default`). */
  project?: string;
  /** Kubeconfig of the host cluster (default: the copy an earlier create kept, else the current context). */
  hostKubeconfig?: string;
  /** Port of the virtual cluster's API (default: the one kept from before, else a free port). */
  port?: number;
  /** How long to wait until the virtual cluster is ready (default 120 s). */
  timeoutMs?: number;
  /**
   * Run the runtime in a container from this image instead of as a background process; false: as a process.
   * Default: as before (a process for a new virtual cluster).
   */
  container?: RuntimeContainer | false;
  /** A client of the platform the user is logged in to; without an access key nothing is registered. */
  platform?: PlatformClient;
  /** The `virtualcluster` program's entry script (it runs the virtual cluster in the background). */
  program: string;
  step?: RunStep;
  /** The step that waits for the runtime to be ready (default: step). */
  waitStep?: RunStep;
}

export interface CreateResult {
  cluster: LocalCluster;
  /** What the runtime reported once it was ready. */
  status: RuntimeStatus;
  /** The virtual cluster existed before (on this machine or on the host): it was updated. */
  updated: boolean;
  /** What the user should know, e.g. where the platform access key comes from. */
  notes: string[];
  /** On an update: whether the stored settings were kept (no file given), and what changed in them. */
  settings?: { kept: boolean; changes: SettingsChanges };
}

export async function createVirtualCluster(options: CreateOptions): Promise<CreateResult> {
  const { name, namespace } = options;
  const step = options.step ?? runQuietly;
  checkName("virtual cluster name", name);
  checkName("namespace", namespace);
  if (options.resetSettings && (options.settingsFile !== undefined || !options.upgrade)) {
    throw new LifecycleError(
      "--reset-settings goes with --upgrade and without -f (it drops the stored settings; -f replaces them)",
    );
  }
  // An upgrade without a file keeps what is stored: read once the host is known.
  const keepStored = Boolean(options.upgrade && options.settingsFile === undefined && !options.resetSettings);
  let label = options.settingsFile ?? "settings";
  let original = readSettings(options.settingsFile);
  let settings = keepStored ? undefined : await checkSettings(original, label, namespace);

  const paths = clusterPaths(namespace, name);
  const existing = readLocalCluster(namespace, name);
  const hostConfig = loadHostKubeconfig(
    options.hostKubeconfig ?? (existing && existsSync(paths.hostKubeconfig) ? paths.hostKubeconfig : undefined),
  );
  using host = await HostCluster.open(hostConfig);
  const stored = await step(`Checking the host cluster ${host.server}`, () =>
    host.readSecret(namespace, settingsSecretName(name)),
  );
  if (stored && !createdFor(stored.metadata, name)) {
    throw new LifecycleError(
      `Secret ${namespace}/${settingsSecretName(name)} exists and was not made by virtualcluster create: choose another name or namespace`,
    );
  }
  if ((existing || stored) && !options.upgrade) {
    throw new LifecycleError(
      `virtual cluster ${name} already exists in namespace ${namespace}: add --upgrade to apply new settings and restart it`,
    );
  }
  const previousText =
    storedSettingsText(stored) ?? (existing && existsSync(paths.settings) ? readSettings(paths.settings) : undefined);
  if (keepStored && previousText !== undefined) {
    original = previousText;
    label = "the stored settings (pass -f to replace them)";
  }
  settings ??= await checkSettings(original, label, namespace);
  const container = options.container === undefined ? existing?.container : options.container || undefined;
  if (container) await step(`Checking the image ${container.image}`, () => checkRuntimeImage(container));

  const client = options.platform;
  const login = client?.login;
  const plan = await planPlatform(name, namespace, settings, options.project, login, host);
  let prefixNamespace: string | undefined;
  if (plan.register && client && login?.accessKey) {
    const self = await step(`Checking the login to ${login.host}`, () => checkLogin(client));
    prefixNamespace = projectNamespace(self, plan.project);
  }

  const undo: (() => Promise<unknown>)[] = [];
  if (await host.ensureNamespace(namespace)) {
    // A namespace made by a run that then fails goes again, with whatever this run put into it.
    undo.push(() => host.remove(`namespace ${namespace}`, () => host.core.deleteNamespace({ name: namespace })));
  }
  // From another machine the settings Secret still says what was registered.
  let registration = existing?.registration ?? registrationFromAnnotations(stored?.metadata?.annotations);
  let wroteApiKeySecret = existing?.wroteApiKeySecret ?? false;
  try {
    if (client && login && prefixNamespace) {
      const instanceNamespace = prefixNamespace;
      const previous = registration;
      registration = await step(`Registering ${name} in project ${plan.project}`, () =>
        register(client, login, host, { name, namespace, project: plan.project, instanceNamespace, previous, undo }),
      );
      wroteApiKeySecret = true;
    }
    const text = editSettings(original, { ensurePlatform: plan.register, project: options.project });
    const final = text === original ? settings : await checkSettings(text, label, namespace);
    await applyHostObjects(host, name, namespace, final, text, registration);

    const hostServer = host.server;
    ensureClusterDir(namespace, name);
    writePrivateFile(paths.settings, text);
    writePrivateFile(paths.hostKubeconfig, hostConfig.text);
    // The runtime runs as its ServiceAccount with the chart's Role, not with the deployer's credentials.
    await ensureRuntimeRbac(host, {
      name,
      namespace,
      multiNamespace: isMultiNamespace(final),
      labels: createdLabels(name),
    });
    writePrivateFile(paths.runtimeKubeconfig, await runtimeKubeconfig(host, hostConfig.cluster, { name, namespace }));
    const cluster: LocalCluster = {
      name,
      namespace,
      created: existing?.created ?? new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      listenHost: existing?.listenHost ?? LISTEN_HOST,
      port: options.port ?? existing?.port ?? (await freePort(LISTEN_HOST)),
      hostServer,
      wroteApiKeySecret,
      registration,
      container,
    };
    writeLocalCluster(cluster);
    undo.length = 0;

    await stopClusterRuntime(paths, existing);
    const started = await startClusterRuntime(cluster, paths, options.program);
    const status = await (options.waitStep ?? step)(`Starting virtual cluster ${name}`, () =>
      waitUntilReady(paths, started, options.timeoutMs ?? 120_000),
    );
    const kept = keepStored && previousText !== undefined;
    return {
      cluster,
      status,
      updated: Boolean(existing || stored),
      notes: plan.notes,
      settings: previousText === undefined ? undefined : { kept, changes: settingsChanges(previousText, text) },
    };
  } catch (error) {
    for (const undoStep of undo.reverse()) await undoStep().catch(() => {});
    throw error;
  }
}

/** The settings text a settings Secret holds, if any. */
function storedSettingsText(secret: V1Secret | undefined): string | undefined {
  const data = secret?.data?.[SETTINGS_KEY];
  return data === undefined ? undefined : Buffer.from(data, "base64").toString("utf8");
}

/**
 * ServiceAccount, the virtual cluster's own Service (the owner of every synced object), the Secret-reader RBAC the
 * settings ask for, and the settings Secret (last).
 */
async function applyHostObjects(
  host: HostCluster,
  name: string,
  namespace: string,
  settings: VirtualClusterSettings,
  text: string,
  registration: PlatformRegistration | undefined,
): Promise<void> {
  const labels = createdLabels(name);
  await host.ensureServiceAccount(namespace, serviceAccountName(name), labels);
  await host.ensureOwnerService(namespace, name, labels);
  const apiKey = settings.external.platform?.apiKey;
  const secretNamespace = apiKey?.namespace || namespace;
  if (apiKey && needsSecretReaderRbac(apiKey.createRBAC, secretNamespace, namespace)) {
    await host.call(`create the Role and RoleBinding to read Secret ${secretNamespace}/${apiKey.secretName}`, () =>
      ensureSecretReaderRbac(host.rbac, { name, namespace, secretName: apiKey.secretName, secretNamespace }),
    );
  }
  await host.applySecret({
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: settingsSecretName(name),
      namespace,
      labels,
      annotations: registrationAnnotations(registration),
    },
    stringData: { "config.yaml": text },
  });
}
