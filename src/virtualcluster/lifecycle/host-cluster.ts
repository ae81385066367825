// The host cluster a virtual cluster syncs into, as `create` and `delete` use it (its kubeconfig: host-kubeconfig.ts):
// API calls whose failures are one line naming the host, and the objects `create` makes and `delete` removes.

import type { V1ObjectMeta, V1Secret } from "@kubernetes/client-node";
import { kubeAccessFromText } from "../kube/kube-access.ts";
import { KubeApiError } from "../kube/kube-api-error.ts";
import {
  type CoreCalls,
  coreCalls,
  type DiscoveryCalls,
  discoveryCalls,
  type RbacCalls,
  rbacCalls,
} from "../kube/kube-calls.ts";
import { KubeHttp } from "../kube/kube-http.ts";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../translate/constants.ts";
import { createTranslator } from "../translate/translator.ts";
import type { HostKubeconfig } from "./host-kubeconfig.ts";
import { firstLine, LifecycleError } from "./lifecycle-error.ts";

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS/;

/** HTTP status of a failed call; undefined for network errors. */
export function hostStatusCode(error: unknown): number | undefined {
  return error instanceof KubeApiError ? error.code : undefined;
}

/** One line for a failed host API call: the Status message, or what went wrong on the network. */
export function hostErrorLine(server: string, error: unknown): string {
  if (error instanceof KubeApiError) {
    const message = error.status?.message;
    if (error.code === 401) return `the host cluster at ${server} rejected the kubeconfig's credentials (401)`;
    if (typeof message === "string" && message !== "") return message.split("\n")[0];
    return `the host cluster at ${server} answered ${error.code}`;
  }
  const cause = (error as { cause?: NodeJS.ErrnoException })?.cause;
  const code = cause?.code ?? (error as NodeJS.ErrnoException)?.code ?? "";
  if (code === "ECONNREFUSED") return `cannot connect to the host cluster at ${server}: connection refused`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `cannot resolve the host cluster's address ${server}`;
  if (TLS_CODES.test(code)) {
    return `cannot verify the certificate of the host cluster at ${server} (${firstLine(cause ?? error)})`;
  }
  if (code) return `cannot reach the host cluster at ${server}: ${code}`;
  return `host cluster at ${server}: ${firstLine(cause ?? error)}`;
}

/** Labels of the objects `create` makes on the host (not the syncer's managed-by label: the syncer prunes those). */
export const CREATED_BY_LABEL = "app.kubernetes.io/managed-by";
export const CREATED_BY_VALUE = "virtualcluster-cli";
export const CLUSTER_LABEL = "virtualcluster.platform.sh/virtualcluster";

export function createdLabels(name: string): Record<string, string> {
  return { [CREATED_BY_LABEL]: CREATED_BY_VALUE, [CLUSTER_LABEL]: name };
}

/** Whether `create` made this object for the virtual cluster `name`. */
export function createdFor(metadata: V1ObjectMeta | undefined, name: string): boolean {
  return metadata?.labels?.[CREATED_BY_LABEL] === CREATED_BY_VALUE && metadata.labels[CLUSTER_LABEL] === name;
}

/** The synced kinds the runtime's syncer creates on the host (labelled managed-by=<name>). */
const SYNCED_KINDS = ["services", "endpoints", "endpointslices", "secrets", "configmaps"] as const;
type SyncedKind = (typeof SYNCED_KINDS)[number];

export class HostCluster {
  readonly server: string;
  readonly core: CoreCalls;
  readonly rbac: RbacCalls;
  readonly discovery: DiscoveryCalls;
  readonly #http: KubeHttp;

  /** The host of a kubeconfig's current context (`using` closes its connections at the end of the scope). */
  static async open(kubeconfig: HostKubeconfig): Promise<HostCluster> {
    try {
      return new HostCluster(new KubeHttp(await kubeAccessFromText(kubeconfig.text, kubeconfig.source)));
    } catch (error) {
      throw new LifecycleError(`cannot use ${kubeconfig.source}: ${firstLine(error)}`);
    }
  }

  constructor(http: KubeHttp) {
    this.#http = http;
    this.server = http.access.server;
    this.core = coreCalls(http);
    this.rbac = rbacCalls(http);
    this.discovery = discoveryCalls(http);
  }

  [Symbol.dispose](): void {
    this.#http.close();
  }

  /** Runs one call; a failure becomes a LifecycleError "cannot <what>: <reason>". */
  async call<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new LifecycleError(`cannot ${what}: ${hostErrorLine(this.server, error)}`);
    }
  }

  /** The object, or undefined on 404. */
  async find<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      if (hostStatusCode(error) === 404) return undefined;
      throw new LifecycleError(`cannot read ${what}: ${hostErrorLine(this.server, error)}`);
    }
  }

  /** Deletes; a missing object is fine. */
  async remove(what: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (hostStatusCode(error) === 404) return;
      throw new LifecycleError(`cannot delete ${what}: ${hostErrorLine(this.server, error)}`);
    }
  }

  /** Creates the namespace unless it exists; true when it was created. */
  async ensureNamespace(name: string): Promise<boolean> {
    const found = await this.find(`namespace ${name}`, () => this.core.readNamespace({ name }));
    if (found) return false;
    try {
      await this.core.createNamespace({ body: { apiVersion: "v1", kind: "Namespace", metadata: { name } } });
      return true;
    } catch (error) {
      if (hostStatusCode(error) === 409) return false;
      throw new LifecycleError(`cannot create namespace ${name}: ${hostErrorLine(this.server, error)}`);
    }
  }

  readSecret(namespace: string, name: string): Promise<V1Secret | undefined> {
    return this.find(`Secret ${namespace}/${name}`, () => this.core.readNamespacedSecret({ namespace, name }));
  }

  /** Creates or replaces a Secret. Messages never include its data. */
  async applySecret(secret: V1Secret): Promise<void> {
    const namespace = secret.metadata?.namespace ?? "";
    const name = secret.metadata?.name ?? "";
    const current = await this.readSecret(namespace, name);
    await this.call(`write Secret ${namespace}/${name}`, () =>
      current
        ? this.core.replaceNamespacedSecret({
            namespace,
            name,
            body: { ...secret, metadata: { ...secret.metadata, resourceVersion: current.metadata?.resourceVersion } },
          })
        : this.core.createNamespacedSecret({ namespace, body: secret }),
    );
  }

  async ensureServiceAccount(namespace: string, name: string, labels: Record<string, string>): Promise<void> {
    const found = await this.find(`ServiceAccount ${namespace}/${name}`, () =>
      this.core.readNamespacedServiceAccount({ namespace, name }),
    );
    if (found) return;
    await this.call(`create ServiceAccount ${namespace}/${name}`, () =>
      this.core.createNamespacedServiceAccount({
        namespace,
        body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace, labels } },
      }),
    );
  }

  /**
   * The virtual cluster's own host Service `<name>`: every object the syncer makes is owned by it, so deleting it (or
   * the namespace) lets the host's garbage collector remove them. Made unless a Service of that name exists.
   */
  async ensureOwnerService(namespace: string, name: string, labels: Record<string, string>): Promise<void> {
    const found = await this.find(`Service ${namespace}/${name}`, () =>
      this.core.readNamespacedService({ namespace, name }),
    );
    if (found) return;
    await this.call(`create Service ${namespace}/${name}`, () =>
      this.core.createNamespacedService({
        namespace,
        body: {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name, namespace, labels },
          spec: { ports: [{ name: "https", port: 443, protocol: "TCP" }] },
        },
      }),
    );
  }

  /**
   * Deletes every object the virtual cluster's syncer made: in its namespace, and in multi-namespace mode its host
   * namespaces with what they hold (only namespaces whose names the translation gives for its labels, so another
   * virtual cluster of the same name elsewhere is never touched). Returns how many synced objects there were.
   */
  async deleteSynced(namespace: string, name: string): Promise<number> {
    const labelSelector = `${MANAGED_BY_LABEL}=${name}`;
    let deleted = 0;
    for (const kind of SYNCED_KINDS) {
      const list = await this.call(`list ${kind} in ${namespace}`, () => listOf(this, kind, namespace, labelSelector));
      for (const item of list) {
        await this.remove(`${kind} ${namespace}/${item}`, () => deleteOf(this, kind, namespace, item));
        deleted++;
      }
    }
    const translator = createTranslator({ name, namespace, multiNamespace: true });
    const namespaces = await this.call("list namespaces", () => this.core.listNamespace({ labelSelector }));
    for (const hostNamespace of namespaces.items) {
      const hostName = hostNamespace.metadata?.name ?? "";
      const virtual = hostNamespace.metadata?.labels?.[NAMESPACE_LABEL];
      if (!virtual || translator.hostNamespace(virtual) !== hostName) continue;
      for (const kind of SYNCED_KINDS) {
        deleted += (await this.call(`list ${kind} in ${hostName}`, () => listOf(this, kind, hostName, labelSelector)))
          .length;
      }
      await this.remove(`namespace ${hostName}`, () => this.core.deleteNamespace({ name: hostName }));
      deleted++;
    }
    return deleted;
  }
}

type Listed = { items: { metadata?: V1ObjectMeta }[] };

async function listOf(host: HostCluster, kind: SyncedKind, namespace: string, labelSelector: string) {
  const request = { namespace, labelSelector };
  const { core, discovery } = host;
  const lists: Record<SyncedKind, () => Promise<Listed>> = {
    services: () => core.listNamespacedService(request),
    endpoints: () => core.listNamespacedEndpoints(request),
    // The host's mirrored slices of synced Endpoints carry their labels too: they go with them anyway.
    endpointslices: () => discovery.listNamespacedEndpointSlice(request),
    secrets: () => core.listNamespacedSecret(request),
    configmaps: () => core.listNamespacedConfigMap(request),
  };
  const list = await lists[kind]();
  return list.items.map((item) => item.metadata?.name ?? "").filter(Boolean);
}

function deleteOf(host: HostCluster, kind: SyncedKind, namespace: string, name: string) {
  const request = { namespace, name };
  const { core, discovery } = host;
  const deletes: Record<SyncedKind, () => Promise<unknown>> = {
    services: () => core.deleteNamespacedService(request),
    endpoints: () => core.deleteNamespacedEndpoints(request),
    endpointslices: () => discovery.deleteNamespacedEndpointSlice(request),
    secrets: () => core.deleteNamespacedSecret(request),
    configmaps: () => core.deleteNamespacedConfigMap(request),
  };
  return deletes[kind]();
}
