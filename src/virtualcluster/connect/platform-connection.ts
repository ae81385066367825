// The virtual cluster's link to the platform. Every cycle (at start, then every heartbeat):
//   look up the access key (a rotated key in the Secret is picked up here, no restart needed)
//   -> create the Secret-reader RBAC on the host when the shared Secret lives in another namespace
//   -> `selves`: the key must carry the role `virtualcluster`, or the cycle fails with a connection error
//   -> find or create our VirtualClusterInstance (external: true) in the project's namespace
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
  /** Called after every successful cycle with the credentials in use (e.g. to point the token verifier at them). */
  onConnected?(credentials: PlatformCredentials): void;
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
  #timer?: NodeJS.Timeout;
  #cycle?: Promise<void>;
  #closed = false;

  constructor(options: PlatformConnectionOptions) {
    this.#options = options;
  }

  state(): ConnectionState {
    return { ...this.#state };
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
    }, this.#options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS);
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
    options.onConnected?.(credentials);
    this.#state = {
      connected: true,
      keySource: credentials.source,
      platform: credentials.host,
      project,
      instance: { namespace, name },
      lastHeartbeat: now,
      subject: self.subject,
    };
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
    const spec: Record<string, unknown> = {
      external: true,
      clusterRef: { namespace: this.#options.namespace, virtualCluster: this.#options.name },
      template: { accessPoint: { ingress: { enabled: true, host: endpoint } } },
    };
    try {
      const current = await api.getInstance(namespace, name);
      // An instance the platform placed on a connected cluster (its agent runs us) is not external.
      const placed = (current?.spec?.clusterRef as { cluster?: string } | undefined)?.cluster;
      if (placed && current?.spec?.external !== true) spec.external = current?.spec?.external;
      if (!current) {
        return await api.createInstance({
          apiVersion: `${PLATFORM_GROUP}/${PLATFORM_VERSION}`,
          kind: "VirtualClusterInstance",
          metadata: { name, namespace },
          spec: { displayName: this.#options.name, ...spec },
        });
      }
      if (!sameInstanceSpec(current.spec, spec)) return await api.patchInstance(namespace, name, { spec });
      return current;
    } catch (error) {
      throw new ConnectionError(
        `cannot register the virtual cluster as ${namespace}/${name} on the platform: ${platformErrorMessage(error)}`,
      );
    }
  }
}

/** Whether the fields the connection owns (external, clusterRef, the ingress access point) already hold `wanted`. */
function sameInstanceSpec(current: Record<string, unknown> | undefined, wanted: Record<string, unknown>): boolean {
  const owned = (spec: Record<string, unknown> | undefined) => {
    const clusterRef = (spec?.clusterRef ?? {}) as Record<string, unknown>;
    const template = (spec?.template ?? {}) as { accessPoint?: { ingress?: Record<string, unknown> } };
    const ingress = template.accessPoint?.ingress ?? {};
    return JSON.stringify([
      spec?.external,
      clusterRef.namespace,
      clusterRef.virtualCluster,
      ingress.enabled,
      ingress.host,
    ]);
  };
  return owned(current) === owned(wanted);
}

function describeFailure(error: unknown): string {
  if (error instanceof ConnectionError || error instanceof ApiKeyNotFoundError) return error.message;
  return `platform connection failed: ${platformErrorMessage(error)}`;
}

export type { PlatformCredentials };
