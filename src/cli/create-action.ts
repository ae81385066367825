// `virtualcluster create`: everything is checked before anything is written (settings, host access, the platform
// login, name clashes); then the host gets the namespace, the ServiceAccount, the RBAC the settings ask for, the
// default API key Secret when the command registers the virtual cluster, and last the settings Secret, whose presence
// means "this virtual cluster exists". Platform objects made by a run that fails before that are removed again.
// Finally the runtime is (re)started in the background and waited for.

import { existsSync } from "node:fs";
import { DEFAULT_API_KEY_SECRET } from "../virtualcluster/config/settings-schema.ts";
import type { VirtualClusterSettings } from "../virtualcluster/config/types.ts";
import {
  ensureSecretReaderRbac,
  needsSecretReaderRbac,
  serviceAccountName,
} from "../virtualcluster/connect/platform-rbac.ts";
import { type PlatformLogin, readClientConfig } from "./client-config.ts";
import type { CreateFlags } from "./create.ts";
import {
  CLUSTER_LABEL,
  createdFor,
  createdLabels,
  currentContextOnly,
  HostCluster,
  loadHostKubeconfig,
} from "./host-cluster.ts";
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
import { freePort, type RuntimeStatusFile, startRuntime, stopRuntime, waitUntilReady } from "./local-runtime.ts";
import { CommandError } from "./patches-io.ts";
import { PlatformClient } from "./platform-client.ts";
import {
  accessKeyExists,
  apiKeySecret,
  checkLogin,
  createDedicatedKey,
  DEFAULT_PROJECT,
  deleteAccessKey,
  deleteInstance,
  ensureInstance,
  projectNamespace,
} from "./platform-registration.ts";
import { checkSettings, editSettings, readSettings } from "./settings-file.ts";
import { registrationAnnotations, registrationFromAnnotations, settingsSecretName } from "./stored-settings.ts";
import { colorEnabled, styles, withSpinner } from "./terminal.ts";

const LISTEN_HOST = "127.0.0.1";

interface Plan {
  /** Register with the platform and write the default API key Secret. */
  register: boolean;
  project: string;
  /** Said once the virtual cluster runs. */
  notes: string[];
}

export async function createVirtualCluster(name: string, flags: CreateFlags): Promise<void> {
  const namespace = flags.namespace;
  checkName("virtual cluster name", name);
  checkName("namespace", namespace);
  const label = flags.file ?? "settings";
  const original = readSettings(flags.file);
  const settings = checkSettings(original, label, namespace);

  const paths = clusterPaths(namespace, name);
  const existing = readLocalCluster(namespace, name);
  const hostConfig = loadHostKubeconfig(
    flags.hostKubeconfig ?? (existing && existsSync(paths.hostKubeconfig) ? paths.hostKubeconfig : undefined),
  );
  const host = new HostCluster(hostConfig);
  const stored = await withSpinner(`Checking the host cluster ${host.server}`, () =>
    host.readSecret(namespace, settingsSecretName(name)),
  );
  if (stored && !createdFor(stored.metadata, name)) {
    throw new CommandError(
      `Secret ${namespace}/${settingsSecretName(name)} exists and was not made by virtualcluster create: choose another name or namespace`,
    );
  }
  if ((existing || stored) && !flags.upgrade) {
    throw new CommandError(
      `virtual cluster ${name} already exists in namespace ${namespace}: add --upgrade to apply new settings and restart it`,
    );
  }

  const login = readClientConfig().platform;
  const plan = await planPlatform(name, namespace, settings, flags, login, host);
  let client: PlatformClient | undefined;
  let prefixNamespace: string | undefined;
  if (plan.register && login?.accessKey) {
    client = new PlatformClient(login);
    const self = await withSpinner(`Checking the login to ${login.host}`, () => checkLogin(client!));
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
      registration = await withSpinner(`Registering ${name} in project ${plan.project}`, () =>
        register(client!, login, host, {
          name,
          namespace,
          project: plan.project,
          instanceNamespace: prefixNamespace!,
          previous: registration,
          undo,
        }),
      );
      wroteApiKeySecret = true;
    }
    const text = editSettings(original, { ensurePlatform: plan.register, project: flags.project });
    const final = text === original ? settings : checkSettings(text, label, namespace);
    await applyHostObjects(host, name, namespace, final, text, registration);

    const hostServer = host.server;
    ensureClusterDir(namespace, name);
    writePrivateFile(paths.settings, text);
    writePrivateFile(paths.hostKubeconfig, currentContextOnly(hostConfig));
    const state: LocalCluster = {
      name,
      namespace,
      created: existing?.created ?? new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      listenHost: existing?.listenHost ?? LISTEN_HOST,
      port: flags.port ?? existing?.port ?? (await freePort(LISTEN_HOST)),
      hostServer,
      wroteApiKeySecret,
      registration,
    };
    writeLocalCluster(state);
    undo.length = 0;

    await stopRuntime(paths);
    const started = startRuntime(state, paths);
    const status = await withSpinner(`Starting virtual cluster ${name}`, () =>
      waitUntilReady(paths, started, (flags.timeout ?? 120) * 1000),
    );
    report(state, status, plan, Boolean(existing || stored));
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => {});
    throw error;
  }
}

/** Whether to register with the platform, in which project, and why not. */
async function planPlatform(
  name: string,
  namespace: string,
  settings: VirtualClusterSettings,
  flags: CreateFlags,
  login: PlatformLogin | undefined,
  host: HostCluster,
): Promise<Plan> {
  const platform = settings.external.platform;
  const project = flags.project ?? platform?.project ?? DEFAULT_PROJECT;
  const notes: string[] = [];
  const loggedIn = Boolean(login?.accessKey);
  if (!loggedIn || platform?.apiKey) {
    if (flags.project !== undefined && !platform) {
      throw new CommandError(
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
      throw new CommandError(
        `namespace ${namespace} already holds the platform API key Secret of virtual cluster ${owner}: create ${name} in another namespace, or set external.platform.apiKey in the settings`,
      );
    }
    notes.push(`the platform access key comes from the existing Secret ${namespace}/${DEFAULT_API_KEY_SECRET}`);
    return { register: false, project, notes };
  }
  return { register: true, project, notes };
}

interface RegisterOptions {
  name: string;
  namespace: string;
  project: string;
  instanceNamespace: string;
  previous?: PlatformRegistration;
  undo: (() => Promise<unknown>)[];
}

/** Instance, dedicated key and default Secret; an earlier key is kept while it still exists. */
async function register(
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

/** ServiceAccount, the Secret-reader RBAC the settings ask for, and the settings Secret (last). */
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

function report(state: LocalCluster, status: RuntimeStatusFile, plan: Plan, updated: boolean): void {
  const paths = clusterPaths(state.namespace, state.name);
  const style = styles(colorEnabled(process.stdout));
  const out: string[] = [
    `${style.green(updated ? "Updated" : "Created")} virtual cluster ${state.name} in namespace ${state.namespace}: ${status.url}`,
    `  kubectl --kubeconfig ${paths.adminKubeconfig} get namespaces`,
  ];
  const platform = status.platform;
  if (platform?.connected) {
    const project = platform.project ?? state.registration?.project ?? DEFAULT_PROJECT;
    out.push(
      `Connected to the platform ${platform.platform} as ${platform.instance?.namespace}/${platform.instance?.name}`,
    );
    out.push(`  virtualcluster connect ${platform.instance?.name ?? state.name} --project ${project}`);
  }
  out.push(`Logs: ${paths.log}`);
  process.stdout.write(`${out.join("\n")}\n`);
  for (const note of plan.notes) process.stderr.write(`Note: ${note}\n`);
  if (platform && !platform.connected) {
    process.stderr.write(
      `${style.yellow("Warning:")} not connected to the platform: ${platform.error ?? "unknown error"}\n`,
    );
  }
}
