import type { Logger } from "pino";
import { KubeApiError, type StatusBody } from "../kube/kube-api-error.ts";
import type { Query, WatchEvent } from "../kube/kube-http.ts";
import type { InformerProgress } from "./key-state.ts";
import { describeError, type KubeClient } from "./kube-client.ts";
import { withoutManagedFields } from "./managed-fields.ts";
import type { ObjectCache } from "./object-cache.ts";
import type { WireList } from "./resource-calls.ts";
import type { WireObject } from "./types.ts";

export type InformerEvent = "add" | "update" | "delete";

export interface InformerOptions {
  /** For log lines, e.g. "virtual endpoints". */
  name: string;
  client: KubeClient;
  /** Collection path, e.g. `/api/v1/endpoints` or `/api/v1/namespaces/<ns>/endpoints`. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  onEvent(event: InformerEvent, object: WireObject): void;
  /**
   * After every list (the first and each re-list), once its differences with the cache are reported. A re-list
   * reports only what the cache held: an object the watch never delivered, created and deleted while it was down, is
   * in neither, and only this call tells a handler that relied on it (the syncer's own writes) to look again.
   */
  onListed?(): void;
  logger?: Logger;
  /** Restart delays after a failed list or watch (default 200 ms doubling to 5 s). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Items per list page (default 500). */
  pageSize?: number;
}

const cacheKey = (namespace: string | undefined, name: string | undefined) => `${namespace ?? ""}/${name ?? ""}`;

/** Objects are cached without metadata.managedFields (see withoutManagedFields()). */
const cached = withoutManagedFields;

/** Watches end after 5 to 10 minutes (spread, as client-go does) and resume from the last resourceVersion. */
const watchTimeoutSeconds = () => 300 + Math.floor(Math.random() * 300);

/** The watch fell behind compaction (410 Gone, as an answer or as an ERROR event): only a new list helps. */
class ExpiredError extends Error {}

const isGone = (error: unknown) =>
  error instanceof ExpiredError || (error instanceof KubeApiError && error.code === 410);

/**
 * List, then watch from the list's resourceVersion, forever: a watch that ends (its timeout) resumes where it
 * stopped; 410 Gone re-lists at once; any other failure (an API server restarting, a refused list) re-lists after a
 * backoff. A re-list reports what changed meanwhile (adds, updates, deletes), so handlers see every difference.
 * Objects are kept as the plain JSON the server sent, less their managedFields.
 */
export class Informer implements ObjectCache {
  readonly ready: Promise<void>;
  readonly #options: InformerOptions;
  readonly #cache = new Map<string, WireObject>();
  readonly #abort = new AbortController();
  #resolveReady!: () => void;
  #isReady = false;
  #stopped = false;
  #resourceVersion = "";
  /** Lists done: a re-list may start from a store with other revisions (a host restored or replaced). */
  #epoch = 0;
  /** Failing since the last successful list: logged once, and once more on recovery. */
  #streak = false;
  #delay: number;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(options: InformerOptions) {
    this.#options = options;
    this.#delay = options.retryBaseMs ?? 200;
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  get(namespace: string, name: string): WireObject | undefined {
    return this.#cache.get(cacheKey(namespace, name));
  }

  values(): IterableIterator<WireObject> {
    return this.#cache.values();
  }

  get size(): number {
    return this.#cache.size;
  }

  /** How far the cache has read: everything up to `resourceVersion` of list `epoch` has been delivered. */
  progress(): InformerProgress {
    return { epoch: this.#epoch, resourceVersion: this.#resourceVersion };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#wake?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    let listed = false;
    while (!this.#stopped) {
      try {
        if (!listed) {
          await this.#list();
          listed = true;
          this.#recovered();
        }
        const started = Date.now();
        await this.#watch();
        // A watch the server ends at once, again and again, must not spin: wait as after a failure.
        if (Date.now() - started < 1000 && !this.#stopped) await this.#sleep(this.#delay);
      } catch (error) {
        if (this.#stopped) return;
        listed = false;
        if (isGone(error)) continue;
        this.#failed(error);
        await this.#sleep(this.#delay);
        this.#delay = Math.min(this.#delay * 2, this.#options.retryMaxMs ?? 5000);
      }
    }
  }

  #selectors(): Query {
    return { labelSelector: this.#options.labelSelector, fieldSelector: this.#options.fieldSelector };
  }

  async #list(): Promise<void> {
    const { client, path } = this.#options;
    const items: WireObject[] = [];
    let next: string | undefined;
    let resourceVersion = "";
    do {
      const page = await client.http.request<WireList>({
        method: "GET",
        path,
        query: { ...this.#selectors(), limit: this.#options.pageSize ?? 500, continue: next },
      });
      items.push(...(page.items ?? []));
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      next = page.metadata?.continue || undefined;
    } while (next && !this.#stopped);
    if (this.#stopped) return;
    this.#epoch++;
    this.#resourceVersion = resourceVersion;
    this.#replace(items);
    this.#options.onListed?.();
    if (!this.#isReady) {
      this.#isReady = true;
      this.#resolveReady();
    }
  }

  /** Swaps in a fresh list and reports the differences with the cache. */
  #replace(items: WireObject[]): void {
    const previous = new Map(this.#cache);
    this.#cache.clear();
    for (const object of items) {
      this.#cache.set(cacheKey(object.metadata?.namespace, object.metadata?.name), cached(object));
    }
    for (const [key, object] of this.#cache) {
      const old = previous.get(key);
      previous.delete(key);
      if (!old) this.#options.onEvent("add", object);
      else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
        this.#options.onEvent("update", object);
      }
    }
    for (const gone of previous.values()) this.#options.onEvent("delete", gone);
  }

  async #watch(): Promise<void> {
    await this.#options.client.http.watch({
      path: this.#options.path,
      query: {
        ...this.#selectors(),
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: watchTimeoutSeconds(),
      },
      signal: this.#abort.signal,
      onEvent: (event) => this.#event(event),
    });
  }

  #event(event: WatchEvent): void {
    const object = cached(event.object as WireObject);
    // The cache and its progress move together, before handlers run: they may read both.
    const resourceVersion = object.metadata?.resourceVersion;
    switch (event.type) {
      case "ADDED":
      case "MODIFIED":
        this.#cache.set(cacheKey(object.metadata?.namespace, object.metadata?.name), object);
        if (resourceVersion) this.#resourceVersion = resourceVersion;
        this.#options.onEvent(event.type === "ADDED" ? "add" : "update", object);
        break;
      case "DELETED":
        this.#cache.delete(cacheKey(object.metadata?.namespace, object.metadata?.name));
        if (resourceVersion) this.#resourceVersion = resourceVersion;
        this.#options.onEvent("delete", object);
        break;
      case "BOOKMARK":
        if (resourceVersion) this.#resourceVersion = resourceVersion;
        break;
      case "ERROR": {
        const code = (event.object as { code?: number }).code;
        if (code === 410) throw new ExpiredError("watch expired");
        throw new KubeApiError(code ?? 500, event.object as StatusBody);
      }
    }
  }

  #recovered(): void {
    if (this.#streak) this.#options.logger?.info({ informer: this.#options.name }, "informer reconnected");
    this.#streak = false;
    this.#delay = this.#options.retryBaseMs ?? 200;
  }

  #failed(error: unknown): void {
    if (!this.#streak) {
      this.#options.logger?.warn(
        { informer: this.#options.name, error: describeError(error) },
        "list or watch failed; retrying",
      );
    }
    this.#streak = true;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
