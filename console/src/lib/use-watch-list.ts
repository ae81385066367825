// A live list: LIST, then WATCH from its resourceVersion, applying ADDED / MODIFIED / DELETED as they come, so a
// change made elsewhere (kubectl, another browser) shows without a reload. A watch that ends or expires (410) is
// followed by a fresh LIST; a failure shows as the list's error with the last known items kept.

import { useEffect, useState } from "react";
import { ApiError, apiRequest, CONSOLE_HEADERS, sessionEnded, sessionOver } from "./api.ts";
import type { KubeList, KubeObject } from "./kube.ts";

export interface WatchedList<T> {
  items: T[];
  loading: boolean;
  error?: unknown;
}

const keyOf = (object: KubeObject) => `${object.metadata.namespace ?? ""}/${object.metadata.name ?? ""}`;

async function watchStream(
  url: string,
  signal: AbortSignal,
  onEvent: (type: string, object: KubeObject) => void,
): Promise<void> {
  // Never through the HTTP cache: a watch never completes, and the cache makes a request for a URL it is still
  // writing (the same watch of the page before, not yet torn down) wait for that one to complete.
  const response = await fetch(url, {
    headers: { ...CONSOLE_HEADERS, Accept: "application/json" },
    signal,
    cache: "no-store",
  });
  if (response.status === 401) sessionEnded();
  if (!response.ok || !response.body) throw new ApiError(response.status, await response.json().catch(() => ({})));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (!line) continue;
      const event = JSON.parse(line) as { type: string; object: KubeObject & { code?: number } };
      if (event.type === "ERROR") throw new ApiError(event.object.code ?? 500, event.object);
      onEvent(event.type, event.object);
    }
  }
}

interface Primed {
  list?: KubeList<KubeObject>;
  promise: Promise<KubeList<KubeObject>>;
}
const primed = new Map<string, Primed>();
const listUrl = (path: string, query: string) => `${path}${query ? `${path.includes("?") ? "&" : "?"}${query}` : ""}`;
const byName = <T extends KubeObject>(items: T[]) =>
  [...items].sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));

/**
 * Starts the first LIST of a page before the page renders (with the session, see main.tsx): a list that is back by
 * then is in the first render, without a loading state and a second paint.
 */
export function primeList(path: string, query = ""): void {
  const url = listUrl(path, query);
  if (primed.has(url)) return;
  const entry: Primed = { promise: apiRequest<KubeList<KubeObject>>(url) };
  entry.promise.then(
    (list) => {
      entry.list = list;
    },
    () => primed.delete(url),
  );
  primed.set(url, entry);
}

/**
 * `path` is the collection URL; `query` extra parameters (fieldSelector, labelSelector). undefined: nothing.
 * A new `epoch` starts over with a fresh LIST (what the server lets the caller see has changed).
 */
export function useWatchList<T extends KubeObject>(path: string | undefined, query = "", epoch = ""): WatchedList<T> {
  const [state, setState] = useState<WatchedList<T>>(() => {
    const ready = path ? primed.get(listUrl(path, query))?.list : undefined;
    return ready ? { items: byName(ready.items as T[]), loading: false } : { items: [], loading: true };
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new epoch only starts the list over
  useEffect(() => {
    if (!path) {
      setState({ items: [], loading: false });
      return;
    }
    const controller = new AbortController();
    const items = new Map<string, T>();
    const publish = (error?: unknown) => setState({ items: byName([...items.values()]), loading: false, error });
    // A primed first LIST is used once; every later LIST (after a watch ends) asks the server again.
    let first = primed.get(listUrl(path, query))?.promise;
    primed.delete(listUrl(path, query));
    const separator = path.includes("?") ? "&" : "?";
    (async () => {
      let failures = 0;
      while (!controller.signal.aborted) {
        // The platform ends a watch once its session ends: a page leaving for the login page lists nothing more.
        if (await sessionOver()) return;
        try {
          const reused = first && ((await first.catch(() => undefined)) as KubeList<T> | undefined);
          first = undefined;
          const list = reused || (await apiRequest<KubeList<T>>(listUrl(path, query), { signal: controller.signal }));
          items.clear();
          for (const item of list.items) items.set(keyOf(item), item);
          publish();
          failures = 0;
          const watchQuery = `watch=1&allowWatchBookmarks=false&resourceVersion=${list.metadata.resourceVersion ?? ""}`;
          await watchStream(
            `${path}${separator}${query ? `${query}&` : ""}${watchQuery}`,
            controller.signal,
            (type, object) => {
              if (type === "DELETED") items.delete(keyOf(object));
              else if (type === "ADDED" || type === "MODIFIED") items.set(keyOf(object), object as T);
              else return;
              publish();
            },
          );
        } catch (error) {
          if (controller.signal.aborted) return;
          failures += 1;
          if (!(error instanceof ApiError && error.code === 410)) publish(error);
          await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** Math.min(failures, 6))));
        }
      }
    })();
    return () => controller.abort();
  }, [path, query, epoch]);
  return state;
}
