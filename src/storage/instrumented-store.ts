// A KeyValueStore decorator that reports every operation (name, resource, success, latency) to a metrics hook,
// so /metrics shows storage behaviour without the backends knowing about Prometheus.

import type { KeyValueStore, ListOptions, WatchOptions } from "./types.ts";

export type StorageObserver = (operation: string, resource: string, ok: boolean, seconds: number) => void;

/** `/management.platform.sh/users//alice` -> `users.management.platform.sh`; `/core/services/...` -> `services`. */
export function resourceOfKey(key: string): string {
  const [, group = "", plural = ""] = key.split("/");
  if (!plural) return group || "unknown";
  return group === "core" ? plural : `${plural}.${group}`;
}

export function instrumentStore(store: KeyValueStore, observe: StorageObserver): KeyValueStore {
  const timed = async <T>(operation: string, key: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      const result = await run();
      observe(operation, resourceOfKey(key), true, (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      observe(operation, resourceOfKey(key), false, (performance.now() - started) / 1000);
      throw error;
    }
  };
  return {
    currentRevision: () => store.currentRevision(),
    compactedRevision: () => store.compactedRevision(),
    get: (key) => timed("get", key, () => store.get(key)),
    list: (options: ListOptions) => timed("list", options.prefix, () => store.list(options)),
    count: (prefix) => timed("count", prefix, () => store.count(prefix)),
    create: (key, value) => timed("create", key, () => store.create(key, value)),
    update: (key, value, revision) => timed("update", key, () => store.update(key, value, revision)),
    delete: (key, revision) => timed("delete", key, () => store.delete(key, revision)),
    watch: (options: WatchOptions) => {
      observe("watch", resourceOfKey(options.prefix), true, 0);
      return store.watch(options);
    },
    compact: (keep) => timed("compact", "/", () => store.compact(keep)),
    close: () => store.close(),
  };
}
