// The syncer of a virtual cluster (one declaration per synced kind in kind-*.ts):
//   informers (list + watch) on the virtual API server, one per enabled kind (and the kinds they follow)
//   informers on the host: the same kinds in the host namespace, only objects labelled managed-by=<name>,
//     and the virtual cluster's own host Service (the owner of every synced object)
//   -> every event becomes a key `<resource>/<virtual namespace>/<virtual name>` in a rate-limited work queue
//   -> workers (one key at a time) run Reconciler.reconcile: desired host object from the virtual one, compared with
//      the host object, written only when different; failures retried with backoff, SyncError events recorded.

import type { Logger } from "pino";
import type { OwnerReference } from "../../apimachinery/types.ts";
import type { Registry } from "../../registry/registry.ts";
import type { KubeAccess } from "../kube/kube-access.ts";
import type { LoadedSettings } from "../settings/load.ts";
import { isMultiNamespace } from "../settings/multi-namespace.ts";
import { MANAGED_BY_LABEL, NAMESPACE_LABEL } from "../translate/constants.ts";
import { createTranslator, type Translator } from "../translate/translator.ts";
import { OBJECT_NAME_ANNOTATION, OBJECT_NAMESPACE_ANNOTATION, SYNC_ERROR_REASON } from "./constants.ts";
import type { SyncContext } from "./desired-state.ts";
import { deservesEvent, RetryError, syncErrorMessage } from "./errors.ts";
import { EventRecorder } from "./event-recorder.ts";
import { Informer, type InformerEvent } from "./informer.ts";
import { formatKey, orphanKey, parseKey } from "./keys.ts";
import { createKubeClient, type KubeClient } from "./kube-client.ts";
import { LocalInformer } from "./local-informer.ts";
import { isNamespaceKey, NamespaceSync } from "./namespace-sync.ts";
import type { ObjectCache } from "./object-cache.ts";
import { Reconciler, type Side } from "./reconciler.ts";
import { ReferenceTracker } from "./reference-tracker.ts";
import { resourceCalls } from "./resource-calls.ts";
import { StatsCounter, type SyncerStats } from "./stats.ts";
import { collectionPath, type SyncedKind } from "./synced-kind.ts";
import { SYNCED_KINDS } from "./synced-kinds.ts";
import type { SyncedResource, WireObject } from "./types.ts";
import { WorkQueue } from "./work-queue.ts";

export interface SyncerOptions {
  /** The virtual cluster's API server. */
  virtual: KubeAccess;
  /**
   * The virtual API server's registry, when the syncer runs in its process (the runtime): the virtual informers then
   * read its store directly instead of watching it over HTTPS. Writes go through `virtual` either way.
   */
  virtualRegistry?: Registry;
  /** The host cluster. */
  host: KubeAccess;
  /** Name of the virtual cluster. */
  name: string;
  /** Host namespace the virtual cluster runs in; synced objects are created there. */
  hostNamespace: string;
  settings: LoadedSettings;
  logger?: Logger;
  /**
   * Concurrent workers (default 16); a key is only ever handled by one of them at a time. A sync mostly waits on the
   * host's answer (its commit and fsync), so more workers let the host commit more creates at once.
   */
  workers?: number;
}

export interface Syncer {
  stats(): SyncerStats;
  /** Resolves once every informer has done its initial list. */
  synced(): Promise<void>;
  close(): Promise<void>;
}

/** True when some patch list has a reference patch: only then can a ConfigMap or Secret be referenced. */
const hasReferencePatches = (settings: LoadedSettings) =>
  Object.values(settings.patches).some((set) => set.patches.some((patch) => patch.mode === "reference"));

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
  readonly #multiNamespace: boolean;
  readonly #hostUnmanaged: Partial<Record<SyncedResource, ObjectCache>> = {};
  readonly #namespaces: NamespaceSync | undefined;
  #enabled: Partial<Record<SyncedResource, boolean>> = {};
  #isSynced = false;
  #closed = false;

  constructor(options: SyncerOptions) {
    const { settings, name, hostNamespace, logger } = options;
    this.#options = options;
    this.#multiNamespace = isMultiNamespace(settings.settings);
    this.#translator = createTranslator({ name, namespace: hostNamespace, multiNamespace: this.#multiNamespace });
    this.#context = {
      translator: this.#translator,
      vcluster: { name, namespace: hostNamespace, config: settings.settings },
      patches: settings.patches,
    };
    const toHost = settings.settings.sync.toHost;
    const references = hasReferencePatches(settings);
    const enabled: Partial<Record<SyncedResource, boolean>> = {};
    const all: Partial<Record<SyncedResource, boolean>> = {};
    for (const kind of SYNCED_KINDS) {
      enabled[kind.resource] = kind.enabled(toHost, references);
      all[kind.resource] = (toHost[kind.settings] as { all?: boolean }).all === true;
    }
    // In multi-namespace mode synced objects live in many host namespaces: the host informers watch them all.
    const hostScope = this.#multiNamespace ? undefined : hostNamespace;
    this.#virtualClient = createKubeClient(options.virtual);
    this.#hostClient = createKubeClient(options.host);
    const calls = (client: KubeClient) =>
      Object.fromEntries(
        SYNCED_KINDS.map((kind) => [kind.resource, resourceCalls(client.http, kind)]),
      ) as Side["calls"];
    this.#virtual = { informers: {}, calls: calls(this.#virtualClient) };
    this.#host = { informers: {}, calls: calls(this.#hostClient) };
    const managed = `${MANAGED_BY_LABEL}=${name}`;
    // A kind another enabled kind follows is watched in the virtual cluster even when it is not synced itself.
    const followed = new Set(
      SYNCED_KINDS.filter((kind) => enabled[kind.resource] && kind.follows).map((kind) => kind.follows),
    );
    for (const kind of SYNCED_KINDS) {
      const synced = enabled[kind.resource] === true;
      if (synced || followed.has(kind.resource)) {
        this.#virtual.informers[kind.resource] = this.#virtualInformer(kind, (_event, object) =>
          this.#virtualEvent(kind, object),
        );
      }
      if (!synced) continue;
      // A referenced object may be imported from a host object that is not ours: watch them all.
      const importable = references && kind.referenceable;
      const selector = importable ? undefined : [managed, kind.hostSelector].filter(Boolean).join(",");
      const informer = this.#informer(
        "host",
        kind,
        hostScope,
        selector,
        (event, object) => this.#hostEvent(kind, event, object),
        () => this.#reconciler.hostListed(kind.resource),
      );
      this.#host.informers[kind.resource] = informer;
      if (importable) this.#hostUnmanaged[kind.resource] = informer;
    }
    this.#enabled = enabled;
    this.#namespaces = this.#multiNamespace
      ? new NamespaceSync({
          name,
          hostNamespace,
          translator: this.#translator,
          virtual: this.#virtualClient,
          host: this.#hostClient,
          stats: this.#counter,
          enqueue: (key) => this.#queue.add(key),
          logger,
        })
      : undefined;
    this.#ownerInformer = new Informer({
      name: "host owner service",
      client: this.#hostClient,
      path: `/api/v1/namespaces/${encodeURIComponent(hostNamespace)}/services`,
      fieldSelector: `metadata.name=${name}`,
      onEvent: (event, object) => this.#ownerEvent(event, object),
      logger,
    });
    this.#reconciler = new Reconciler({
      name,
      hostNamespace,
      context: this.#context,
      enabled,
      all,
      hostUnmanaged: this.#hostUnmanaged,
      virtual: this.#virtual,
      host: this.#host,
      references: new ReferenceTracker(),
      stats: this.#counter,
      enqueue: (key) => this.#queue.add(key),
    });
    this.#events = new EventRecorder(this.#virtualClient.http, this.#counter, logger);
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
      for (const kind of SYNCED_KINDS) {
        if (!this.#enabled[kind.resource]) continue;
        for (const object of this.#virtual.informers[kind.resource]?.values() ?? []) {
          this.#reconciler.primeReferences(
            formatKey(kind.resource, object.metadata?.namespace ?? "", object.metadata?.name ?? ""),
          );
        }
      }
      const workers = this.#options.workers ?? 16;
      for (let i = 0; i < workers; i++) this.#workers.push(this.#work());
      this.#options.logger?.info(
        { name: this.#options.name, hostNamespace: this.#options.hostNamespace },
        "syncer started",
      );
    });
  }

  stats(): SyncerStats {
    const queueDepth = this.#queue.length + this.#queue.processing;
    let objects = 0;
    for (const informer of Object.values(this.#virtual.informers)) objects += informer?.size ?? 0;
    return this.#counter.snapshot(
      { queueDepth, retrying: this.#queue.waiting, stalled: this.#reconciler.stalled },
      this.#isSynced,
      objects,
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.shutDown();
    await Promise.all(this.#allInformers().map((informer) => informer.stop()));
    await Promise.all(this.#workers);
    await Promise.all([this.#virtualClient.close(), this.#hostClient.close()]);
  }

  /** The virtual side's informer of a kind: on the API server's store when in its process, else over HTTPS. */
  #virtualInformer(kind: SyncedKind, onEvent: (event: InformerEvent, object: WireObject) => void): ObjectCache {
    const registry = this.#options.virtualRegistry;
    const store = registry?.genericStore(
      kind.apiVersion.includes("/") ? kind.apiVersion.split("/")[0] : "",
      kind.resource,
    );
    if (!registry || !store) return this.#informer("virtual", kind, undefined, kind.virtualSelector, onEvent);
    return new LocalInformer({
      name: `virtual ${kind.resource}`,
      storage: registry.storage,
      prefix: `${store.key({ namespace: "", name: "" }).replace(/\/\/$/, "")}/`,
      decode: (record) => store.decodeShared(record),
      labelSelector: kind.virtualSelector,
      onEvent,
      logger: this.#options.logger,
    });
  }

  #allInformers(): ObjectCache[] {
    return [
      ...Object.values(this.#virtual.informers),
      ...Object.values(this.#host.informers),
      this.#ownerInformer,
      ...(this.#namespaces?.informers() ?? []),
    ] as ObjectCache[];
  }

  #informer(
    side: "virtual" | "host",
    kind: SyncedKind,
    namespace: string | undefined,
    labelSelector: string | undefined,
    onEvent: (event: InformerEvent, object: WireObject) => void,
    onListed?: () => void,
  ): Informer {
    return new Informer({
      name: `${side} ${kind.resource}`,
      client: side === "virtual" ? this.#virtualClient : this.#hostClient,
      path: collectionPath(kind, namespace),
      labelSelector,
      onEvent,
      onListed,
      logger: this.#options.logger,
    });
  }

  /** A virtual object changed: its own key, and the keys of the same name of the kinds that follow its kind. */
  #virtualEvent(kind: SyncedKind, object: WireObject): void {
    const namespace = object.metadata?.namespace ?? "";
    const name = object.metadata?.name ?? "";
    if (this.#enabled[kind.resource]) this.#queue.add(formatKey(kind.resource, namespace, name));
    for (const follower of SYNCED_KINDS) {
      if (follower.follows === kind.resource && this.#enabled[follower.resource]) {
        this.#queue.add(formatKey(follower.resource, namespace, name));
      }
    }
  }

  #hostEvent(kind: SyncedKind, event: InformerEvent, object: WireObject): void {
    const metadata = object.metadata ?? {};
    if (metadata.labels?.[MANAGED_BY_LABEL] !== this.#options.name) {
      // Not ours: only a referenced object (to import) matters.
      const key = this.#reconciler.referencedKey(kind.resource, metadata.namespace ?? "", metadata.name ?? "");
      if (key) this.#queue.add(key);
      return;
    }
    const key = this.#hostKey(kind.resource, object);
    if (this.#reconciler.hostEvent(key, event, object)) this.#queue.add(key);
  }

  /** The key of a managed host object: from the syncer's annotations, else by reversing its name. */
  #hostKey(resource: SyncedResource, object: WireObject): string {
    const metadata = object.metadata ?? {};
    const hostName = metadata.name ?? "";
    const name = metadata.annotations?.[OBJECT_NAME_ANNOTATION];
    const namespace = metadata.annotations?.[OBJECT_NAMESPACE_ANNOTATION];
    const hostNamespace = metadata.namespace ?? "";
    const same =
      name &&
      namespace &&
      this.#translator.hostName(name, namespace) === hostName &&
      this.#translator.hostNamespace(namespace) === hostNamespace;
    if (same) {
      return formatKey(resource, namespace, name);
    }
    const found = this.#translator.virtualName(hostName, hostNamespace, metadata.labels?.[NAMESPACE_LABEL]);
    return found ? formatKey(resource, found.namespace, found.name) : orphanKey(resource, hostName);
  }

  /** The virtual cluster's own host Service owns every synced object; a change re-syncs everything. */
  #ownerEvent(event: InformerEvent, object: WireObject): void {
    const metadata = object.metadata ?? {};
    const usable = event !== "delete" && metadata.uid && metadata.labels?.[MANAGED_BY_LABEL] === undefined;
    const owner: OwnerReference | undefined = usable
      ? { apiVersion: "v1", kind: "Service", name: metadata.name ?? "", uid: metadata.uid ?? "" }
      : undefined;
    // Owner references cannot cross namespaces: in multi-namespace mode the host namespaces are cleaned up instead.
    if (this.#multiNamespace || owner?.uid === this.#context.owner?.uid) return;
    this.#context.owner = owner;
    if (!this.#isSynced) return; // the first sync uses it anyway
    for (const kind of SYNCED_KINDS) {
      for (const virtual of this.#virtual.informers[kind.resource]?.values() ?? []) this.#virtualEvent(kind, virtual);
    }
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.#queue.get();
      if (key === undefined) return;
      // Each sync starts in the loop's check phase: requests to the virtual API server that arrived with it (this
      // process serves both) are answered first, so a burst of syncing does not add to their latency.
      await new Promise((resolve) => setImmediate(resolve));
      try {
        if (isNamespaceKey(key)) await this.#namespaces?.reconcile(key);
        else await this.#reconciler.reconcile(key);
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
    if (isNamespaceKey(key)) {
      this.#options.logger?.warn({ key, error: (error as Error).message }, "namespace sync failed; retrying");
      return;
    }
    this.#reconciler.forgetWrite(key);
    const parsed = parseKey(key);
    const message = syncErrorMessage(
      SYNCED_KINDS.find((kind) => kind.resource === parsed.resource)?.confidential ?? true,
      error,
    );
    const logger = this.#options.logger;
    const fields = { key, retries: this.#queue.retries(key) };
    if (error instanceof RetryError) logger?.debug({ ...fields, reason: message }, "sync retried");
    else {
      logger?.warn({ ...fields, error: message }, "sync failed; retrying with backoff");
      this.#counter.failed(key, message);
    }
    if (this.#closed || !deservesEvent(error)) return;
    for (const target of this.#reconciler.eventTargets(parsed)) {
      await this.#events.warning(target.object, target.kind, SYNC_ERROR_REASON, message);
    }
  }
}
