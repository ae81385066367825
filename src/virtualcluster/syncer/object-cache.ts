import type { InformerProgress } from "./key-state.ts";
import type { WireObject } from "./types.ts";

/**
 * What the reconciler reads of one resource on one side: an informer's cache. Informer (list and watch over HTTPS)
 * and LocalInformer (the virtual API server's store, in the same process) are its implementations.
 */
export interface ObjectCache {
  /** Resolves once the first list is in the cache. */
  readonly ready: Promise<void>;
  start(): void;
  stop(): Promise<void>;
  get(namespace: string, name: string): WireObject | undefined;
  values(): IterableIterator<WireObject>;
  /** How far the cache has read: everything up to `resourceVersion` of list `epoch` has been delivered. */
  progress(): InformerProgress;
}
