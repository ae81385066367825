// Namespace syncing (multi-namespace mode): every virtual namespace gets its own host namespace, created with the
// syncer's marks (managed-by and namespace labels, object-name annotation) and owned by the virtual cluster's own
// host namespace (so deleting that one lets the host's garbage collector remove them all), and deleted with the
// virtual one. Only host namespaces carrying this virtual cluster's managed-by label are ever deleted.

import type { Logger } from "pino";
import type { OwnerReference } from "../../apimachinery/types.ts";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../translate/constants.ts";
import type { Translator } from "../translate/translator.ts";
import { OBJECT_NAME_ANNOTATION } from "./constants.ts";
import { HostWriteError, RetryError, UnmanagedObjectError } from "./errors.ts";
import { Informer } from "./informer.ts";
import { type KubeClient, statusCode } from "./kube-client.ts";
import type { StatsCounter } from "./stats.ts";
import type { WireObject } from "./types.ts";

const PREFIX = "namespaces/";

/** Queue keys of namespaces: `namespaces/<virtual namespace>`. */
export const namespaceKey = (name: string): string => `${PREFIX}${name}`;
export const isNamespaceKey = (key: string): boolean => key.startsWith(PREFIX);

export interface NamespaceSyncOptions {
  name: string;
  /** The host namespace the virtual cluster itself lives in: the owner of its host namespaces. */
  hostNamespace: string;
  translator: Translator;
  virtual: KubeClient;
  host: KubeClient;
  stats: StatsCounter;
  enqueue(key: string): void;
  logger?: Logger;
}

const NAMESPACES = "/api/v1/namespaces";
const namespacePath = (name: string) => `${NAMESPACES}/${encodeURIComponent(name)}`;

export class NamespaceSync {
  /** The virtual cluster's own host namespace as an owner; null when it cannot be read (no owner then). */
  async #ownerReference(): Promise<OwnerReference | null> {
    if (this.#owner !== undefined) return this.#owner;
    const { host, hostNamespace } = this.#options;
    try {
      const home = await host.http.request<WireObject>({ method: "GET", path: namespacePath(hostNamespace) });
      this.#owner = home.metadata?.uid
        ? { apiVersion: "v1", kind: "Namespace", name: hostNamespace, uid: home.metadata.uid }
        : null;
    } catch (error) {
      const code = statusCode(error);
      if (code !== 403 && code !== 404) throw error; // unreachable: the create waits for a retry
      this.#owner = null;
    }
    return this.#owner;
  }

  readonly #options: NamespaceSyncOptions;
  readonly #virtual: Informer;
  readonly #host: Informer;
  /** The owner reference of host namespaces, once read (undefined: not yet; null: not readable). */
  #owner: OwnerReference | null | undefined;

  constructor(options: NamespaceSyncOptions) {
    this.#options = options;
    const { virtual, host, name, logger } = options;
    const managed = `${MANAGED_BY_LABEL}=${name}`;
    this.#virtual = new Informer({
      name: "virtual namespaces",
      client: virtual,
      path: NAMESPACES,
      onEvent: (_event, object) => options.enqueue(namespaceKey(object.metadata?.name ?? "")),
      logger,
    });
    this.#host = new Informer({
      name: "host namespaces",
      client: host,
      path: NAMESPACES,
      labelSelector: managed,
      onEvent: (_event, object) => {
        const virtualName = object.metadata?.labels?.[NAMESPACE_LABEL];
        if (virtualName) options.enqueue(namespaceKey(virtualName));
      },
      logger,
    });
  }

  informers(): Informer[] {
    return [this.#virtual, this.#host];
  }

  async reconcile(key: string): Promise<void> {
    const virtualName = key.slice(PREFIX.length);
    const { translator, name, stats, host } = this.#options;
    const hostName = translator.hostNamespace(virtualName);
    const virtual = this.#virtual.get("", virtualName);
    const current = this.#host.get("", hostName);
    const wanted = virtual !== undefined && !virtual.metadata?.deletionTimestamp;
    if (!wanted) {
      if (!current || current.metadata?.deletionTimestamp) return;
      try {
        await host.http.request({
          method: "DELETE",
          path: namespacePath(hostName),
          body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: current.metadata?.uid } },
        });
        stats.write("host", "Namespace", "delete");
      } catch (error) {
        const code = statusCode(error);
        if (code !== 404 && code !== 409) throw new HostWriteError("delete", "Namespace", "", hostName, error, false);
      }
      return;
    }
    if (current) return; // labels and annotation are set at creation; nothing else of a namespace is synced
    const owner = await this.#ownerReference();
    const body: WireObject = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: hostName,
        labels: { [MANAGED_BY_LABEL]: name, [NAMESPACE_LABEL]: virtualName },
        annotations: { [OBJECT_NAME_ANNOTATION]: virtualName },
        ...(owner ? { ownerReferences: [owner] } : {}),
      },
    };
    try {
      await host.http.request({ method: "POST", path: NAMESPACES, body });
      stats.write("host", "Namespace", "create");
    } catch (error) {
      if (statusCode(error) !== 409) throw new HostWriteError("create", "Namespace", "", hostName, error, false);
      const existing = await host.http
        .request<WireObject>({ method: "GET", path: namespacePath(hostName) })
        .catch(() => undefined);
      if (existing && existing.metadata?.labels?.[MANAGED_BY_LABEL] !== name) {
        throw new UnmanagedObjectError("Namespace", "", hostName, `${MANAGED_BY_LABEL}=${name}`);
      }
      throw new RetryError(`host Namespace "${hostName}" appeared meanwhile`);
    }
  }
}
