// The virtual cluster's link to the platform. Every cycle (at start, then every heartbeat):
//   look up the access key (a rotated key in the Secret is picked up here, no restart needed)
//   -> create the Secret-reader RBAC on the host when the shared Secret lives in another namespace
//   -> `selves`: the key must carry the role `virtualcluster`, or the cycle fails with a connection error
//   -> find or create our VirtualClusterInstance (external: true) in the project's namespace: creating it registers
//      this key's owner as the runtime that reports for it; an existing one gets only what it leaves empty (the
//      platform lets a runtime change nothing else; a different access point is a warning in state())
//   -> report status: online, phase Ready, Kubernetes version, serving CA, heartbeat
//   -> hand the instance's client CA to the API server (certificates the platform signs for users).
// A failed cycle is logged and kept in state() for the health output; the control plane keeps serving either way.

import type { Logger } from "pino";
import type { PlatformSettings } from "../settings/types.ts";
import {
  ApiKeyNotFoundError,
  lookupApiKey,
  type PlatformCredentials,
  SecretForbiddenError,
  type SecretReader,
} from "./api-key-lookup.ts";
import {
  createPlatformApi,
  type InstanceObject,
  isUnreachable,
  PLATFORM_GROUP,
  PLATFORM_VERSION,
  type PlatformApi,
  platformErrorMessage,
  type SelfStatus,
} from "./platform-api.ts";
import {
  ensureSecretReaderRbac,
  needsSecretReaderRbac,
  platformRoleBindingName,
  platformRoleName,
  type RoleApi,
  serviceAccountName,
} from "./platform-rbac.ts";
import { hasVirtualClusterRole } from "./scope-access.ts";

export const VIRTUALCLUSTER_ROLE = "virtualcluster";
const DEFAULT_HEARTBEAT_MS = 30_000;

export interface PlatformConnectionOptions {
  /** Virtual cluster name and its host namespace. */
  name: string;
  namespace: string;
  platform: PlatformSettings;
  host: { core: SecretReader; rbac: RoleApi };
  /** What the instance reports about the virtual cluster. */
  describe(): { kubernetesVersion: string; servingCaPem: string; endpoint: string };
  /** Receives the instance's client-certificate CA whenever it is known or changes. */
  onClientCertificateAuthority?(pem: string): void;
  /**
   * Called after every successful cycle with the credentials in use and what the platform said of them (e.g. to
   * point the token verifier at them and learn the platform's address).
   */
  onConnected?(credentials: PlatformCredentials, self: SelfStatus): void;
  /** Report at least this often; without it, as often as the platform asks (selves), by default every 30 s. */
  heartbeatIntervalMs?: number;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
}

export interface ConnectionState {
  connected: boolean;
  /** One line saying why the last cycle failed; absent when it succeeded. */
  error?: string;
  /** Where the key came from (never the key). */
  keySource?: string;
  platform?: string;
  project?: string;
  instance?: { namespace: string; name: string };
  lastHeartbeat?: string;
  /** Whom the platform says the key belongs to. */
  subject?: string;
  /** Seconds between two reports (the platform's heartbeat, or a shorter --heartbeat-seconds). */
  heartbeatSeconds?: number;
  /** Connected, but something a person should fix (the access point names another address). */
  warning?: string;
}

/** A connection problem a user can fix; the message says how. */
export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConnectionError";
  }
}

export class PlatformConnection {
  readonly #options: PlatformConnectionOptions;
  #state: ConnectionState = { connected: false, error: "connecting" };
  #api?: PlatformApi;
  #apiKey?: string;
  #rbacDoneFor?: string;
  #clientCa?: string;
  /** Why kubeconfigs may not reach this virtual cluster (its access point is elsewhere), if they may not. */
  #warning?: string;
  /** The heartbeat the platform asks for (selves), once known. */
  #announcedHeartbeatMs?: number;
  #timer?: NodeJS.Timeout;
  #cycle?: Promise<void>;
  #closed = false;

  constructor(options: PlatformConnectionOptions) {
    this.#options = options;
  }

  state(): ConnectionState {
    return { ...this.#state };
  }

  /** The time between two reports: the platform's heartbeat, or ours when it is shorter (the platform's bound holds). */
  heartbeatMs(): number {
    const own = this.#options.heartbeatIntervalMs;
    const announced = this.#announcedHeartbeatMs;
    if (own === undefined) return announced ?? DEFAULT_HEARTBEAT_MS;
    return announced === undefined ? own : Math.min(own, announced);
  }

  /** The platform client of the current key (for token reviews); undefined until a key was found. */
  api(): PlatformApi | undefined {
    return this.#api;
  }

  /** Runs the first cycle (its failure is kept in state(), not thrown) and schedules the heartbeat. */
  async start(): Promise<void> {
    await this.runCycle();
    this.#schedule();
  }

  /** Runs one cycle now (tests, and after the Secret changed). Cycles never overlap. */
  runCycle(): Promise<void> {
    this.#cycle ??= this.#connect().finally(() => {
      this.#cycle = undefined;
    });
    return this.#cycle;
  }

  /** Stops the heartbeat and reports the instance offline (best effort). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#cycle?.catch(() => {});
    const { instance } = this.#state;
    if (this.#api && instance && this.#state.connected) {
      await this.#api
        .patchInstanceStatus(instance.namespace, instance.name, { online: false, phase: "Sleeping", reason: "Stopped" })
        .catch(() => {});
    }
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.runCycle().finally(() => this.#schedule());
    }, this.heartbeatMs());
    this.#timer.unref();
  }

  async #connect(): Promise<void> {
    try {
      await this.#connectOnce();
    } catch (error) {
      const message = describeFailure(error);
      if (this.#state.error !== message) this.#options.logger?.error({ reason: message }, "platform connection failed");
      this.#state = { ...this.#state, connected: false, error: message };
    }
  }

  async #connectOnce(): Promise<void> {
    const options = this.#options;
    await this.#ensureRbac();
    let credentials: PlatformCredentials;
    try {
      credentials = await lookupApiKey({
        core: options.host.core,
        platform: options.platform,
        namespace: options.namespace,
        env: options.env,
      });
    } catch (error) {
      if (error instanceof SecretForbiddenError) throw new ConnectionError(this.#missingRole(error));
      throw error;
    }
    if (credentials.accessKey !== this.#apiKey || !this.#api) {
      if (this.#apiKey !== undefined)
        options.logger?.info({ source: credentials.source }, "platform access key changed");
      this.#api = createPlatformApi(credentials);
      this.#apiKey = credentials.accessKey;
    }
    const api = this.#api;

    let self: SelfStatus;
    try {
      self = await api.self();
    } catch (error) {
      if (isUnreachable(error)) {
        throw new ConnectionError(`cannot reach the platform at ${credentials.host}: ${platformErrorMessage(error)}`);
      }
      throw new ConnectionError(
        `the platform at ${credentials.host} rejected the access key from ${credentials.source}: ${platformErrorMessage(error)}`,
      );
    }
    this.#followHeartbeat(self.instanceHeartbeatSeconds);
    if (!hasVirtualClusterRole(self.accessKeyScope)) {
      throw new ConnectionError(
        `the access key ${self.accessKey ?? ""} from ${credentials.source} lacks the role "${VIRTUALCLUSTER_ROLE}", so ` +
          `this virtual cluster cannot authenticate with the platform; create a key with that role ` +
          "(virtualcluster platform create accesskey NAME --virtualcluster-role) and put it in the Secret",
      );
    }
    const project = options.platform.project || credentials.project;
    const namespace = `${self.projectNamespacePrefix ?? "p-"}${project}`;
    const name = credentials.name ?? options.name;
    const described = options.describe();
    const instance = await this.#ensureInstance(api, { namespace, name, endpoint: described.endpoint });
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const reported = await api.patchInstanceStatus(namespace, name, {
      phase: "Ready",
      reason: null,
      message: null,
      online: true,
      kubernetesVersion: described.kubernetesVersion,
      serverCertificateAuthority: described.servingCaPem,
      lastHeartbeatTime: now,
    });
    const clientCa = (reported.status?.clientCertificateAuthority ?? instance.status?.clientCertificateAuthority) as
      | string
      | undefined;
    if (clientCa && clientCa !== this.#clientCa) {
      this.#clientCa = clientCa;
      options.onClientCertificateAuthority?.(clientCa);
    }
    if (!this.#state.connected) {
      options.logger?.info(
        { platform: credentials.host, project, instance: `${namespace}/${name}` },
        "connected to the platform",
      );
    }
    options.onConnected?.(credentials, self);
    this.#state = {
      connected: true,
      keySource: credentials.source,
      platform: credentials.host,
      project,
      instance: { namespace, name },
      lastHeartbeat: now,
      subject: self.subject,
      heartbeatSeconds: this.heartbeatMs() / 1000,
      ...(this.#warning ? { warning: this.#warning } : {}),
    };
  }

  #followHeartbeat(seconds: number | undefined): void {
    if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) return;
    const announced = seconds * 1000;
    if (announced === this.#announcedHeartbeatMs) return;
    this.#announcedHeartbeatMs = announced;
    const own = this.#options.heartbeatIntervalMs;
    if (own !== undefined && own > announced) {
      this.#options.logger?.info(
        { heartbeatSeconds: seconds },
        "the platform asks for a shorter heartbeat than --heartbeat-seconds; reporting at its interval",
      );
    }
  }

  async #ensureRbac(): Promise<void> {
    const { platform, namespace, name, host } = this.#options;
    const apiKey = platform.apiKey;
    if (!apiKey) return;
    const secretNamespace = apiKey.namespace || namespace;
    if (!needsSecretReaderRbac(apiKey.createRBAC, secretNamespace, namespace)) return;
    const target = { name, namespace, secretName: apiKey.secretName, secretNamespace };
    const id = JSON.stringify(target);
    if (this.#rbacDoneFor === id) return;
    try {
      await ensureSecretReaderRbac(host.rbac, target);
    } catch (error) {
      // Running as its own ServiceAccount the runtime may not write RBAC: `virtualcluster create` made it.
      if ((error as { code?: number }).code !== 403) throw error;
    }
    this.#rbacDoneFor = id;
  }

  /** Says which Role a Secret read needs when the host refuses it. */
  #missingRole(error: SecretForbiddenError): string {
    const { name, namespace, platform } = this.#options;
    const { place } = error;
    const account = `${namespace}/${serviceAccountName(name)}`;
    const own = place.namespace === namespace;
    const role = own
      ? `a Role in ${namespace} allowing get on secrets (the runtime's Role vc-${name})`
      : `the Role ${platformRoleName(name, namespace)} in ${place.namespace} (get on secrets/${place.name}) and its RoleBinding ${platformRoleBindingName(name, namespace)} to ServiceAccount ${account}`;
    const createRBAC = platform.apiKey?.createRBAC ?? true;
    const fix = own
      ? "run `virtualcluster create --upgrade` to restore it"
      : createRBAC
        ? "run `virtualcluster create --upgrade` to create them"
        : "external.platform.apiKey.createRBAC is false, so create them yourself or set createRBAC: true";
    return `cannot read Secret ${place.namespace}/${place.name} as ServiceAccount ${account}: the host cluster denies it (403); missing: ${role}; ${fix}`;
  }

  async #ensureInstance(
    api: PlatformApi,
    wanted: { namespace: string; name: string; endpoint: string },
  ): Promise<InstanceObject> {
    const { namespace, name, endpoint } = wanted;
    const spec = {
      external: true,
      clusterRef: { namespace: this.#options.namespace, virtualCluster: this.#options.name },
      template: { accessPoint: { ingress: { enabled: true, host: endpoint } } },
    };
    let instance: InstanceObject;
    try {
      const current = await api.getInstance(namespace, name);
      // An instance the platform placed on a connected cluster (its agent runs us) is not external.
      const placed = (current?.spec?.clusterRef as { cluster?: string } | undefined)?.cluster;
      if (placed && current?.spec?.external !== true) spec.external = false;
      if (!current) {
        return await api.createInstance({
          apiVersion: `${PLATFORM_GROUP}/${PLATFORM_VERSION}`,
          kind: "VirtualClusterInstance",
          metadata: { name, namespace },
          spec: { displayName: this.#options.name, ...spec },
        });
      }
      this.#checkSameVirtualCluster(current, `${namespace}/${name}`);
      // Registration fills in what is still empty; what is set is the project's to change (the platform refuses).
      const missing = missingRegistration(current.spec, spec);
      instance = missing ? await api.patchInstance(namespace, name, { spec: missing }) : current;
    } catch (error) {
      if (error instanceof ConnectionError) throw error;
      throw new ConnectionError(
        `cannot register the virtual cluster as ${namespace}/${name} on the platform: ${platformErrorMessage(error)}`,
      );
    }
    this.#noteAccessPoint(instance, endpoint);
    return instance;
  }

  /** An instance registered for another virtual cluster is not ours to report for. */
  #checkSameVirtualCluster(instance: InstanceObject, where: string): void {
    const ref = (instance.spec?.clusterRef ?? {}) as { namespace?: unknown; virtualCluster?: unknown };
    const { namespace, name } = this.#options;
    if ((!ref.namespace || ref.namespace === namespace) && (!ref.virtualCluster || ref.virtualCluster === name)) return;
    throw new ConnectionError(
      `the platform's instance ${where} stands for virtual cluster ${String(ref.virtualCluster)} in host namespace ${String(ref.namespace)}, not for this one: register under another name (the key Secret's "name")`,
    );
  }

  /** Says when kubeconfigs point elsewhere than where this virtual cluster serves (a project admin moves them). */
  #noteAccessPoint(instance: InstanceObject, endpoint: string): void {
    const template = (instance.spec?.template ?? {}) as { accessPoint?: { ingress?: { host?: unknown } } };
    const host = template.accessPoint?.ingress?.host;
    const warning =
      typeof host === "string" && host !== endpoint
        ? `the instance's access point is ${host} but this virtual cluster serves at ${endpoint}: kubeconfigs point to ${host} until a project owner or admin changes spec.template.accessPoint.ingress.host`
        : undefined;
    if (warning && warning !== this.#warning) this.#options.logger?.warn({ host, endpoint }, warning);
    this.#warning = warning;
  }
}

/** The registration fields `current` leaves empty, with the values of `wanted`; undefined when none is empty. */
function missingRegistration(
  current: Record<string, unknown> | undefined,
  wanted: {
    external: boolean;
    clusterRef: Record<string, string>;
    template: { accessPoint: { ingress: Record<string, unknown> } };
  },
): Record<string, unknown> | undefined {
  const empty = (value: unknown) => value === undefined || value === null || value === "" || value === false;
  const clusterRef = (current?.clusterRef ?? {}) as Record<string, unknown>;
  const template = (current?.template ?? {}) as { accessPoint?: { ingress?: Record<string, unknown> } };
  const ingress = template.accessPoint?.ingress ?? {};
  const missing: Record<string, unknown> = {};
  if (empty(current?.external) && wanted.external) missing.external = true;
  const ref = Object.fromEntries(Object.entries(wanted.clusterRef).filter(([key]) => empty(clusterRef[key])));
  if (Object.keys(ref).length) missing.clusterRef = ref;
  const wantedIngress = wanted.template.accessPoint.ingress;
  const fill = Object.fromEntries(Object.entries(wantedIngress).filter(([key]) => empty(ingress[key])));
  if (Object.keys(fill).length) missing.template = { accessPoint: { ingress: fill } };
  return Object.keys(missing).length ? missing : undefined;
}

function describeFailure(error: unknown): string {
  if (error instanceof ConnectionError || error instanceof ApiKeyNotFoundError) return error.message;
  return `platform connection failed: ${platformErrorMessage(error)}`;
}

export type { PlatformCredentials };
