// A KeyValueStore decorator that reports every operation (name, resource, success, latency) to a metrics hook,
// so /metrics shows storage behaviour without the backends knowing about Prometheus.

import type { KeyValueStore, ListOptions, WatchOptions } from "./types.ts";

export type StorageObserver = (operation: string, resource: string, ok: boolean, seconds: number) => void;

/** `/management.platform.sh/users//alice` -> `users.management.platform.sh`; `/core/services/...` -> `services`. */
export function resourceOfKey(key: string): string {
  const first = key.indexOf("/", 1);
  const group = first === -1 ? key.slice(1) : key.slice(1, first);
  if (first === -1) return group || "unknown";
  const second = key.indexOf("/", first + 1);
  const plural = second === -1 ? key.slice(first + 1) : key.slice(first + 1, second);
  if (!plural) return group || "unknown";
  return group === "core" ? plural : `${plural}.${group}`;
}

export function instrumentStore(store: KeyValueStore, observe: StorageObserver): KeyValueStore {
  // Plain promise chaining, not an async wrapper: this runs on every storage call of every request.
  const timed = <T>(operation: string, key: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let pending: Promise<T>;
    try {
      pending = run();
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.then(
      (result) => {
        observe(operation, resourceOfKey(key), true, (performance.now() - started) / 1000);
        return result;
      },
      (error: unknown) => {
        observe(operation, resourceOfKey(key), false, (performance.now() - started) / 1000);
        throw error;
      },
    );
  };
  return {
    currentRevision: () => store.currentRevision(),
    ...(store.revisionNow ? { revisionNow: () => store.revisionNow!() } : {}),
    compactedRevision: () => store.compactedRevision(),
    get: (key) => timed("get", key, () => store.get(key)),
    list: (options: ListOptions) => timed("list", options.prefix, () => store.list(options)),
    count: (prefix) => timed("count", prefix, () => store.count(prefix)),
    create: (key, value) => timed("create", key, () => store.create(key, value)),
    update: (key, value, revision) => timed("update", key, () => store.update(key, value, revision)),
    delete: (key, revision) => timed("delete", key, () => store.delete(key, revision)),
    ...(store.updateChain
      ? {
          updateChain: (key: string, values: string[], revision: number) =>
            timed("update", key, () => store.updateChain!(key, values, revision)),
        }
      : {}),
    watch: (options: WatchOptions) => {
      observe("watch", resourceOfKey(options.prefix), true, 0);
      return store.watch(options);
    },
    ...(store.checkSpace ? { checkSpace: () => store.checkSpace!() } : {}),
    ...(store.snapshot ? { snapshot: (file: string) => timed("snapshot", "/", () => store.snapshot!(file)) } : {}),
    ...(store.stats ? { stats: () => store.stats!() } : {}),
    ...(store.statsVersion ? { statsVersion: () => store.statsVersion!() } : {}),
    ...(store.rebuild ? { rebuild: () => store.rebuild!() } : {}),
    compact: (keep) => timed("compact", "/", () => store.compact(keep)),
    close: () => store.close(),
  };
}
