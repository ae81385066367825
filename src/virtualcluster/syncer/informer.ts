import { type KubernetesListObject, type KubernetesObject, ListWatch, Watch } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { cloneJson } from "../patches/json-clone.ts";
import { describeError, type KubeClient } from "./kube-client.ts";
import type { WireObject } from "./types.ts";

export type InformerEvent = "add" | "update" | "delete";

export interface InformerOptions {
  /** For log lines, e.g. "virtual endpoints". */
  name: string;
  client: KubeClient;
  /** Collection path, e.g. `/api/v1/endpoints` or `/api/v1/namespaces/<ns>/endpoints`. */
  path: string;
  /** Lists the collection with the same selectors as the watch. */
  list(): Promise<KubernetesListObject<KubernetesObject>>;
  labelSelector?: string;
  fieldSelector?: string;
  onEvent(event: InformerEvent, object: WireObject): void;
  logger?: Logger;
  /** Restart delays after a failed list or watch (default 200 ms doubling to 5 s). */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

const cacheKey = (namespace: string | undefined, name: string | undefined) => `${namespace ?? ""}/${name ?? ""}`;

/**
 * A client-node ListWatch that keeps running: it re-lists after a 410 (ListWatch does that itself) and restarts
 * with backoff after the errors that stop a ListWatch (connection refused or reset when an API server restarts, a
 * failed list). Objects are kept as plain JSON, whether they came from a list (typed models) or a watch.
 */
export class Informer {
  readonly #options: InformerOptions;
  readonly #listWatch: ListWatch<KubernetesObject>;
  readonly #cache = new Map<string, WireObject>();
  readonly ready: Promise<void>;
  #resolveReady!: () => void;
  #listed = false;
  #isReady = false;
  #stopped = false;
  /** The current attempt failed (#failed scheduled the next one). */
  #attemptFailed = false;
  /** Failing since the last successful start: logged once, and once more on recovery. */
  #streak = false;
  #delay: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: InformerOptions) {
    this.#options = options;
    this.#delay = options.retryBaseMs ?? 200;
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
    const list = async () => {
      const result = await options.list();
      this.#listed = true;
      return result;
    };
    this.#listWatch = new ListWatch(
      options.path,
      new Watch(options.client.watchConfig),
      list,
      false,
      options.labelSelector,
      options.fieldSelector,
    );
    this.#listWatch.on("add", (object) => this.#store("add", object));
    this.#listWatch.on("update", (object) => this.#store("update", object));
    this.#listWatch.on("delete", (object) => this.#remove(object));
    this.#listWatch.on("error", (error) => this.#failed(error));
  }

  start(): void {
    void this.#run();
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

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#listWatch.stop();
  }

  async #run(): Promise<void> {
    if (this.#stopped) return;
    this.#attemptFailed = false;
    await this.#listWatch.start();
    if (this.#attemptFailed || this.#stopped) return;
    if (this.#streak) this.#options.logger?.info({ informer: this.#options.name }, "informer reconnected");
    this.#streak = false;
    this.#delay = this.#options.retryBaseMs ?? 200;
    if (this.#listed && !this.#isReady) {
      this.#isReady = true;
      this.#resolveReady();
    }
  }

  #failed(error: unknown): void {
    if (this.#stopped) return;
    this.#attemptFailed = true;
    if (!this.#streak) {
      this.#options.logger?.warn(
        { informer: this.#options.name, error: describeError(error) },
        "list or watch failed; retrying",
      );
    }
    this.#streak = true;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#run(), this.#delay);
    this.#delay = Math.min(this.#delay * 2, this.#options.retryMaxMs ?? 5000);
  }

  #store(event: InformerEvent, object: KubernetesObject): void {
    const plain = cloneJson(object) as WireObject;
    this.#cache.set(cacheKey(plain.metadata?.namespace, plain.metadata?.name), plain);
    this.#options.onEvent(event, plain);
  }

  #remove(object: KubernetesObject): void {
    const plain = cloneJson(object) as WireObject;
    this.#cache.delete(cacheKey(plain.metadata?.namespace, plain.metadata?.name));
    this.#options.onEvent("delete", plain);
  }
}
