// The namespace controller: a namespace marked for deletion (namespace-store.ts) is emptied — every namespaced
// object in it is deleted through its store, so finalizers, owner references and watch events behave as for a
// client's delete — and once nothing is left, its `kubernetes` finalizer (spec) and ours (metadata) are removed and
// the namespace goes. Objects held by their own finalizers keep it Terminating; it is retried with backoff.

import type { Logger } from "pino";
import { KUBERNETES_FINALIZER, type Namespace } from "../apis/core/v1/namespace.ts";
import type { InformerHandler } from "../auth/store-informer.ts";
import { resourcePrefix } from "../registry/keys.ts";
import type { Registry } from "../registry/registry.ts";
import { systemContext } from "../registry/system-context.ts";
import type { StoredRecord, WatchEvent } from "../storage/types.ts";
import { StorageError } from "../storage/types.ts";
import { NAMESPACE_CONTENT_FINALIZER } from "./namespace-store.ts";

const PREFIX = "/core/namespaces/";
const MANAGER = "namespace-controller";
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;

export class NamespaceController implements InformerHandler {
  readonly prefixes = [PREFIX];
  private readonly registry: Registry;
  private readonly logger?: Logger;
  private readonly queue = new Set<string>();
  private readonly retries = new Map<string, { timer?: NodeJS.Timeout; delay: number }>();
  private draining?: Promise<void>;
  private stopped = false;

  constructor(registry: Registry, logger?: Logger) {
    this.registry = registry;
    this.logger = logger;
  }

  reset(records: StoredRecord[]): void {
    for (const record of records) this.observe(record);
  }

  apply(event: WatchEvent): void {
    if (event.type === "delete") this.forget(nameOf(event.record.key));
    else this.observe(event.record);
  }

  stop(): void {
    this.stopped = true;
    for (const retry of this.retries.values()) clearTimeout(retry.timer);
    this.retries.clear();
    this.queue.clear();
  }

  /** Resolves once no namespace is being worked on right now (tests). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private observe(record: StoredRecord): void {
    const namespace = JSON.parse(record.value) as Namespace;
    if (namespace.metadata.deletionTimestamp && namespace.metadata.finalizers?.includes(NAMESPACE_CONTENT_FINALIZER)) {
      this.enqueue(namespace.metadata.name ?? "");
    }
  }

  private forget(name: string): void {
    clearTimeout(this.retries.get(name)?.timer);
    this.retries.delete(name);
  }

  private enqueue(name: string): void {
    if (this.stopped || !name) return;
    this.queue.add(name);
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.size > 0 && !this.stopped) {
      const [name] = this.queue;
      this.queue.delete(name);
      let done = false;
      try {
        done = await this.finalize(name);
      } catch (error) {
        this.logger?.warn({ namespace: name, err: String(error) }, "deleting the content of a namespace failed");
      }
      if (done) this.forget(name);
      else this.retryLater(name);
    }
  }

  private retryLater(name: string): void {
    if (this.stopped) return;
    const retry = this.retries.get(name) ?? { delay: RETRY_MIN_MS / 2 };
    clearTimeout(retry.timer);
    retry.delay = Math.min(retry.delay * 2, RETRY_MAX_MS);
    retry.timer = setTimeout(() => this.enqueue(name), retry.delay);
    retry.timer.unref();
    this.retries.set(name, retry);
  }

  /** Deletes the namespace's content; true when the namespace is finalized (or no longer needs us). */
  private async finalize(name: string): Promise<boolean> {
    const storage = this.registry.storage;
    const namespaces = this.registry.genericStore("", "namespaces");
    if (!namespaces) return true;
    const key = namespaces.key({ name });
    const record = await storage.get(key);
    if (!record) return true;
    const namespace = namespaces.decode(record) as Namespace;
    if (!namespace.metadata.finalizers?.includes(NAMESPACE_CONTENT_FINALIZER)) return true;

    const context = systemContext("system:serviceaccount:kube-system:namespace-controller", MANAGER);
    let remaining = 0;
    for (const store of this.registry.genericStores()) {
      if (!store.definition.namespaced) continue;
      await store.deleteCollection(context, { namespace: name }, {});
      remaining += await storage.count(resourcePrefix(store.definition, name));
    }
    if (remaining > 0) return false;

    // Empty: drop the `kubernetes` finalizer; once no spec finalizer is left, ours too (which removes it).
    const next = structuredClone(namespace);
    const spec = (next.spec?.finalizers ?? []).filter((f) => f !== KUBERNETES_FINALIZER);
    if (spec.length) next.spec = { ...next.spec, finalizers: spec };
    else delete next.spec?.finalizers;
    if (spec.length === 0) {
      const rest = (next.metadata.finalizers ?? []).filter((f) => f !== NAMESPACE_CONTENT_FINALIZER);
      if (rest.length) next.metadata.finalizers = rest;
      else delete next.metadata.finalizers;
    }
    delete next.metadata.resourceVersion;
    try {
      if (!next.metadata.finalizers?.length) await storage.delete(key, record.revision);
      else await storage.update(key, namespaces.encode(next), record.revision);
    } catch (error) {
      if (error instanceof StorageError && (error.storageCode === "Conflict" || error.storageCode === "NotFound")) {
        return false; // changed meanwhile: the watch event brings it back
      }
      throw error;
    }
    // Other spec finalizers: their owners (or a client dropping them) change the namespace, which re-queues it.
    return true;
  }
}

function nameOf(key: string): string {
  return key.slice(PREFIX.length + 1); // "/core/namespaces/" + "" (no namespace) + "/" + name
}
