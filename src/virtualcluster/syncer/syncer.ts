// The Service/Endpoints syncer of a virtual cluster:
//   informers (list + watch) on the virtual API server: services, endpoints, secrets (when reference patches exist)
//   informers on the host: the same kinds in the host namespace, only objects labelled managed-by=<name>,
//     and the virtual cluster's own host Service (the owner of every synced object)
//   -> every event becomes a key `<resource>/<virtual namespace>/<virtual name>` in a rate-limited work queue
//   -> workers (one key at a time) run Reconciler.reconcile: desired host object from the virtual one, compared with
//      the host object, written only when different; failures retried with backoff, SyncError events recorded.

import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { OwnerReference } from "../../apimachinery/types.ts";
import type { LoadedSettings } from "../settings/load.ts";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../translate/constants.ts";
import { createTranslator, type Translator } from "../translate/translator.ts";
import { OBJECT_NAME_ANNOTATION, OBJECT_NAMESPACE_ANNOTATION, SYNC_ERROR_REASON } from "./constants.ts";
import type { SyncContext } from "./desired-state.ts";
import { deservesEvent, RetryError, syncErrorMessage } from "./errors.ts";
import { EventRecorder } from "./event-recorder.ts";
import { Informer, type InformerEvent } from "./informer.ts";
import { caughtUp } from "./key-state.ts";
import { formatKey, orphanKey, parseKey } from "./keys.ts";
import { createKubeClient, type KubeClient } from "./kube-client.ts";
import { Reconciler, type Side } from "./reconciler.ts";
import { ReferenceTracker } from "./reference-tracker.ts";
import { resourceCalls } from "./resource-calls.ts";
import { StatsCounter, type SyncerStats } from "./stats.ts";
import { KIND_OF, type SyncedResource, type WireObject } from "./types.ts";
import { WorkQueue } from "./work-queue.ts";

export interface SyncerOptions {
  /** The virtual cluster's API server. */
  virtual: KubeConfig;
  /** The host cluster. */
  host: KubeConfig;
  /** Name of the virtual cluster. */
  name: string;
  /** Host namespace the virtual cluster runs in; synced objects are created there. */
  hostNamespace: string;
  settings: LoadedSettings;
  logger?: Logger;
  /** Concurrent workers (default 4); a key is only ever handled by one of them at a time. */
  workers?: number;
}

export interface Syncer {
  stats(): SyncerStats;
  /** Resolves once every informer has done its initial list. */
  synced(): Promise<void>;
  close(): Promise<void>;
}

const RESOURCES: readonly SyncedResource[] = ["services", "endpoints", "secrets"];

/** True when a patch list has a reference patch: only then can a Secret need syncing. */
const hasReferencePatches = (settings: LoadedSettings) =>
  settings.patches.endpoints?.patches.some((patch) => patch.mode === "reference") ?? false;

export async function startSyncer(options: SyncerOptions): Promise<Syncer> {
  const runtime = new SyncerRuntime(options);
  runtime.start();
  return {
    stats: () => runtime.stats(),
    synced: () => runtime.ready,
    close: () => runtime.close(),
  };
}

class SyncerRuntime {
  readonly ready: Promise<void>;
  readonly #options: SyncerOptions;
  readonly #translator: Translator;
  readonly #context: SyncContext;
  readonly #virtualClient: KubeClient;
  readonly #hostClient: KubeClient;
  readonly #virtual: Side;
  readonly #host: Side;
  readonly #ownerInformer: Informer;
  readonly #queue = new WorkQueue();
  readonly #counter = new StatsCounter();
  readonly #reconciler: Reconciler;
  readonly #events: EventRecorder;
  readonly #workers: Promise<void>[] = [];
  #isSynced = false;
  #closed = false;

  constructor(options: SyncerOptions) {
    const { settings, name, hostNamespace, logger } = options;
    if (settings.settings.experimental.multiNamespaceMode.enabled) {
      throw new Error("the syncer supports single-namespace mode only (experimental.multiNamespaceMode.enabled: true)");
    }
    this.#options = options;
    this.#translator = createTranslator({ name, namespace: hostNamespace });
    this.#context = {
      translator: this.#translator,
      vcluster: { name, namespace: hostNamespace, config: settings.settings },
      patches: { endpoints: settings.patches.endpoints, secrets: settings.patches.secrets },
    };
    const toHost = settings.settings.sync.toHost;
    const enabled: Record<SyncedResource, boolean> = {
      services: toHost.services.enabled,
      endpoints: toHost.endpoints.enabled,
      secrets: toHost.secrets.enabled && hasReferencePatches(settings),
    };
    this.#virtualClient = createKubeClient(options.virtual);
    this.#hostClient = createKubeClient(options.host);
    const calls = (client: KubeClient) =>
      Object.fromEntries(
        RESOURCES.map((resource) => [resource, resourceCalls(client.core, resource)]),
      ) as Side["calls"];
    this.#virtual = { informers: {}, calls: calls(this.#virtualClient) };
    this.#host = { informers: {}, calls: calls(this.#hostClient) };
    const managed = `${MANAGED_BY_LABEL}=${name}`;
    for (const resource of RESOURCES) {
      // Endpoints rules read the virtual Services even when Services themselves are not synced.
      const watchVirtual = enabled[resource] || (resource === "services" && enabled.endpoints);
      if (watchVirtual) {
        this.#virtual.informers[resource] = this.#informer("virtual", resource, undefined, undefined, (event, object) =>
          this.#virtualEvent(resource, object, event),
        );
      }
      if (enabled[resource]) {
        this.#host.informers[resource] = this.#informer("host", resource, hostNamespace, managed, (event, object) =>
          this.#hostEvent(resource, event, object),
        );
      }
    }
    this.#ownerInformer = new Informer({
      name: "host owner service",
      client: this.#hostClient,
      path: `/api/v1/namespaces/${encodeURIComponent(hostNamespace)}/services`,
      fieldSelector: `metadata.name=${name}`,
      list: () => this.#host.calls.services.list(hostNamespace, { fieldSelector: `metadata.name=${name}` }),
      onEvent: (event, object) => this.#ownerEvent(event, object),
      logger,
    });
    this.#reconciler = new Reconciler({
      name,
      hostNamespace,
      context: this.#context,
      enabled,
      virtual: this.#virtual,
      host: this.#host,
      references: new ReferenceTracker(),
      stats: this.#counter,
      enqueue: (key) => this.#queue.add(key),
    });
    this.#events = new EventRecorder(this.#virtualClient.core, this.#counter, logger);
    this.ready = Promise.all(this.#allInformers().map((informer) => informer.ready)).then(() => {
      this.#isSynced = true;
    });
  }

  start(): void {
    for (const informer of this.#allInformers()) informer.start();
    void this.ready.then(() => {
      if (this.#closed) return;
      // Secrets sync while referenced: learn every reference before any Secret is looked at, so no referenced
      // Secret is deleted on the host at start-up.
      for (const object of this.#virtual.informers.endpoints?.values() ?? []) {
        this.#reconciler.primeReferences(
          formatKey("endpoints", object.metadata?.namespace ?? "", object.metadata?.name ?? ""),
        );
      }
      const workers = this.#options.workers ?? 4;
      for (let i = 0; i < workers; i++) this.#workers.push(this.#work());
      this.#options.logger?.info(
        { name: this.#options.name, hostNamespace: this.#options.hostNamespace },
        "syncer started",
      );
    });
  }

  stats(): SyncerStats {
    const queueDepth = this.#queue.length + this.#queue.processing;
    return this.#counter.snapshot({ queueDepth, retrying: this.#queue.waiting }, this.#isSynced);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.shutDown();
    await Promise.all(this.#allInformers().map((informer) => informer.stop()));
    await Promise.all(this.#workers);
    await Promise.all([this.#virtualClient.close(), this.#hostClient.close()]);
  }

  #allInformers(): Informer[] {
    return [
      ...Object.values(this.#virtual.informers),
      ...Object.values(this.#host.informers),
      this.#ownerInformer,
    ] as Informer[];
  }

  #informer(
    side: "virtual" | "host",
    resource: SyncedResource,
    namespace: string | undefined,
    labelSelector: string | undefined,
    onEvent: (event: InformerEvent, object: WireObject) => void,
  ): Informer {
    const calls = side === "virtual" ? this.#virtual.calls : this.#host.calls;
    const path =
      namespace === undefined
        ? `/api/v1/${resource}`
        : `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`;
    return new Informer({
      name: `${side} ${resource}`,
      client: side === "virtual" ? this.#virtualClient : this.#hostClient,
      path,
      labelSelector,
      list: () => calls[resource].list(namespace, { labelSelector }),
      onEvent,
      logger: this.#options.logger,
    });
  }

  #virtualEvent(resource: SyncedResource, object: WireObject, _event: InformerEvent): void {
    const namespace = object.metadata?.namespace ?? "";
    const name = object.metadata?.name ?? "";
    if (this.#virtual.informers[resource] && resource !== "services")
      this.#queue.add(formatKey(resource, namespace, name));
    if (resource !== "services") return;
    // A Service change decides whether its Endpoints sync.
    if (this.#host.informers.services) this.#queue.add(formatKey("services", namespace, name));
    if (this.#host.informers.endpoints) this.#queue.add(formatKey("endpoints", namespace, name));
  }

  #hostEvent(resource: SyncedResource, event: InformerEvent, object: WireObject): void {
    const key = this.#hostKey(resource, object);
    this.#reconciler.hostEvent(key, (written) => caughtUp(written, event, object));
    this.#queue.add(key);
  }

  /** The key of a managed host object: from the syncer's annotations, else by reversing its name. */
  #hostKey(resource: SyncedResource, object: WireObject): string {
    const metadata = object.metadata ?? {};
    const hostName = metadata.name ?? "";
    const name = metadata.annotations?.[OBJECT_NAME_ANNOTATION];
    const namespace = metadata.annotations?.[OBJECT_NAMESPACE_ANNOTATION];
    if (name && namespace && this.#translator.hostName(name, namespace) === hostName) {
      return formatKey(resource, namespace, name);
    }
    const found = this.#translator.virtualName(hostName, metadata.namespace ?? "", metadata.labels?.[NAMESPACE_LABEL]);
    return found ? formatKey(resource, found.namespace, found.name) : orphanKey(resource, hostName);
  }

  /** The virtual cluster's own host Service owns every synced object; a change re-syncs everything. */
  #ownerEvent(event: InformerEvent, object: WireObject): void {
    const metadata = object.metadata ?? {};
    const usable = event !== "delete" && metadata.uid && metadata.labels?.[MANAGED_BY_LABEL] === undefined;
    const owner: OwnerReference | undefined = usable
      ? { apiVersion: "v1", kind: "Service", name: metadata.name ?? "", uid: metadata.uid ?? "" }
      : undefined;
    if (owner?.uid === this.#context.owner?.uid) return;
    this.#context.owner = owner;
    if (!this.#isSynced) return; // the first sync uses it anyway
    for (const informer of Object.values(this.#virtual.informers)) {
      for (const virtual of informer?.values() ?? [])
        this.#virtualEvent(this.#resourceOf(informer!), virtual, "update");
    }
  }

  #resourceOf(informer: Informer): SyncedResource {
    return RESOURCES.find((resource) => this.#virtual.informers[resource] === informer)!;
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.#queue.get();
      if (key === undefined) return;
      try {
        await this.#reconciler.reconcile(key);
        this.#queue.forget(key);
        this.#counter.syncs++;
        this.#counter.synced(key);
      } catch (error) {
        await this.#failed(key, error);
        this.#queue.addRateLimited(key);
      } finally {
        this.#queue.done(key);
      }
    }
  }

  async #failed(key: string, error: unknown): Promise<void> {
    this.#counter.errors++;
    this.#reconciler.forgetWrite(key);
    const parsed = parseKey(key);
    const message = syncErrorMessage(parsed.resource, error);
    const logger = this.#options.logger;
    const fields = { key, retries: this.#queue.retries(key) };
    if (error instanceof RetryError) logger?.debug({ ...fields, reason: message }, "sync retried");
    else {
      logger?.warn({ ...fields, error: message }, "sync failed; retrying with backoff");
      this.#counter.failed(key, message);
    }
    if (this.#closed || !deservesEvent(error)) return;
    const virtual = this.#reconciler.virtualObject(parsed);
    if (virtual) await this.#events.warning(virtual, KIND_OF[parsed.resource], SYNC_ERROR_REASON, message);
  }
}
