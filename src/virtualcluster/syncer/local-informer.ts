// The virtual side's informer when the syncer runs in the process of the virtual cluster's own API server (the
// runtime): it lists and watches that server's store directly, reading each record as the registry decodes it once
// for every in-process watcher, instead of asking the same process over HTTPS (which encoded every event, encrypted
// it, decrypted it and parsed it again). Writes still go through the API. Same contract as Informer: a re-list after
// a cut-off or compacted watch reports what changed meanwhile, and progress() says how far it has read.

import type { Logger } from "pino";
import { parseLabelSelector } from "../../apimachinery/label-selector.ts";
import type { KeyValueStore, StoredRecord, WatchCloseReason, WatchEvent } from "../../storage/types.ts";
import type { InformerEvent } from "./informer.ts";
import type { InformerProgress } from "./key-state.ts";
import type { ObjectCache } from "./object-cache.ts";
import type { WireObject } from "./types.ts";

export interface LocalInformerOptions {
  /** For log lines, e.g. "virtual endpoints". */
  name: string;
  storage: KeyValueStore;
  /** Key prefix of the resource in every namespace, e.g. `/core/endpoints/`. */
  prefix: string;
  /** The registry's shared decode of a record (must not be mutated). */
  decode(record: StoredRecord): WireObject;
  labelSelector?: string;
  onEvent(event: InformerEvent, object: WireObject): void;
  logger?: Logger;
}

export class LocalInformer implements ObjectCache {
  readonly ready: Promise<void>;
  readonly #options: LocalInformerOptions;
  readonly #matches: (labels: Record<string, string>) => boolean;
  /** `<namespace>/<name>` (the key after the prefix) -> object. */
  readonly #cache = new Map<string, WireObject>();
  #resolveReady!: () => void;
  #revision = 0;
  #epoch = 0;
  #watcher: { close(): void } | undefined;
  #stopped = false;

  constructor(options: LocalInformerOptions) {
    this.#options = options;
    const selector = options.labelSelector ? parseLabelSelector(options.labelSelector) : undefined;
    this.#matches = selector ? (labels) => selector.matches(labels) : () => true;
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
  }

  start(): void {
    void this.#list();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#watcher?.close();
  }

  get(namespace: string, name: string): WireObject | undefined {
    return this.#cache.get(`${namespace}/${name}`);
  }

  values(): IterableIterator<WireObject> {
    return this.#cache.values();
  }

  progress(): InformerProgress {
    return { epoch: this.#epoch, resourceVersion: String(this.#revision) };
  }

  /** Reads the store at one revision, reports the differences with the cache, then watches from there. */
  async #list(): Promise<void> {
    const { storage, prefix } = this.#options;
    try {
      const revision = await storage.currentRevision();
      const { records } = await storage.list({ prefix, revision });
      if (this.#stopped) return;
      this.#epoch++;
      this.#revision = revision;
      this.#replace(records);
      this.#resolveReady();
      this.#watcher = storage.watch({
        prefix,
        afterRevision: revision,
        onEvents: (events) => {
          for (const event of events) this.#apply(event);
          return true;
        },
        onClose: (reason) => this.#closed(reason),
      });
    } catch (error) {
      if (this.#stopped) return;
      this.#options.logger?.warn({ informer: this.#options.name, error: String(error) }, "store list failed; retrying");
      setTimeout(() => void this.#list(), 200).unref();
    }
  }

  #closed(reason: WatchCloseReason): void {
    this.#watcher = undefined;
    if (this.#stopped || reason.kind === "closed") return;
    // Cut off (slow) or behind compaction: a new list, which reports what changed meanwhile.
    void this.#list();
  }

  /**
   * The cached form of a record: the shared decode less its managedFields (a shallow copy: the decode is shared and
   * the field sets would be most of the cache, as the HTTPS informer keeps them out too).
   */
  #object(record: StoredRecord): WireObject | undefined {
    const object = this.#options.decode(record);
    if (!this.#matches(object.metadata?.labels ?? {})) return undefined;
    if (object.metadata?.managedFields === undefined) return object;
    const { managedFields: _fields, ...metadata } = object.metadata;
    return { ...object, metadata };
  }

  #replace(records: StoredRecord[]): void {
    const previous = new Map(this.#cache);
    this.#cache.clear();
    for (const record of records) {
      const object = this.#object(record);
      if (object) this.#cache.set(record.key.slice(this.#options.prefix.length), object);
    }
    for (const [key, object] of this.#cache) {
      const old = previous.get(key);
      previous.delete(key);
      if (!old) this.#options.onEvent("add", object);
      else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion)
        this.#options.onEvent("update", object);
    }
    for (const gone of previous.values()) this.#options.onEvent("delete", gone);
  }

  #apply(event: WatchEvent): void {
    const key = event.record.key.slice(this.#options.prefix.length);
    this.#revision = event.record.revision;
    const known = this.#cache.get(key);
    const object = event.type === "delete" ? undefined : this.#object(event.record);
    if (object) {
      this.#cache.set(key, object);
      this.#options.onEvent(known ? "update" : "add", object);
    } else if (known) {
      // Deleted, or no longer selected: gone from this cache.
      this.#cache.delete(key);
      this.#options.onEvent("delete", event.type === "delete" ? this.#options.decode(event.record) : known);
    }
  }
}
