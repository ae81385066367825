// WATCH for the generic store: optional initial state as ADDED events, then storage events converted to API events
// with selector transitions (an object moving out of the selection is DELETED for this watcher), bookmarks, and
// 410 Expired when the requested revision is older than the compacted history.

import type { KubeObject, Status } from "../apimachinery/types.ts";
import type { StoredRecord, WatchCloseReason, WatchEvent } from "../storage/types.ts";
import { resourcePrefix } from "./keys.ts";
import { parseResourceVersion, selectionPredicate } from "./selectors.ts";
import type { GenericStore } from "./store.ts";
import type { ApiWatchEvent, RequestContext, WatchHandle, WatchOptions, WatchSink } from "./types.ts";

/** Upstream sends a bookmark about once a minute to watchers that allow them. */
const BOOKMARK_INTERVAL_MS = 60_000;

export async function watchObjects(
  store: GenericStore,
  context: RequestContext,
  options: WatchOptions,
  sink: WatchSink,
): Promise<WatchHandle> {
  const d = store.definition;
  const predicate = selectionPredicate(d, options.labelSelector, options.fieldSelector);
  const matches = (object: KubeObject) => !predicate || predicate(object);
  const prefix = resourcePrefix(d, options.namespace);
  const requested = options.resourceVersion ? parseResourceVersion(options.resourceVersion) : 0;
  const initial = requested === 0 || options.sendInitialEvents === true;
  const decode = (record: StoredRecord) => store.present(store.decodeShared(record), context);

  let lastRevision = requested;
  if (initial) {
    const page = await store.storage.list({ prefix });
    lastRevision = page.revision;
    for (const record of page.records) {
      const object = store.decode(record);
      if (matches(object)) sink.send({ type: "ADDED", object: store.present(object, context) });
    }
    if (options.sendInitialEvents && options.allowWatchBookmarks) {
      sink.send(bookmark(store, lastRevision, { "k8s.io/initial-events-end": "true" }));
    }
  }

  let closedByConsumer = false;
  let timer: NodeJS.Timeout | undefined;
  const watcher = store.storage.watch({
    prefix,
    afterRevision: lastRevision,
    onEvents(events: WatchEvent[]) {
      let more = true;
      for (const event of events) {
        lastRevision = event.record.revision;
        const apiEvent = convert(event, decode, matches);
        if (apiEvent && !sink.send(apiEvent)) more = false;
      }
      return more;
    },
    onClose(reason: WatchCloseReason) {
      if (timer) clearInterval(timer);
      if (closedByConsumer) return;
      if (reason.kind === "compacted") {
        sink.send({ type: "ERROR", object: expiredStatus(reason.requestedRevision, reason.compactedRevision) });
        sink.end("expired");
      } else {
        sink.end(reason.kind);
      }
    },
  });

  if (options.allowWatchBookmarks) {
    timer = setInterval(() => sink.send(bookmark(store, lastRevision)), BOOKMARK_INTERVAL_MS);
    timer.unref();
  }

  return {
    resume: () => watcher.resume(),
    close: () => {
      closedByConsumer = true;
      if (timer) clearInterval(timer);
      watcher.close();
    },
  };
}

function convert(
  event: WatchEvent,
  decode: (record: StoredRecord) => KubeObject,
  matches: (object: KubeObject) => boolean,
): ApiWatchEvent | undefined {
  const object = decode(event.record);
  if (event.type === "create") return matches(object) ? { type: "ADDED", object } : undefined;
  if (event.type === "delete") return matches(object) ? { type: "DELETED", object } : undefined;
  const now = matches(object);
  const before = event.previous ? matches(decode(event.previous)) : false;
  if (now && before) return { type: "MODIFIED", object };
  if (now) return { type: "ADDED", object };
  if (before) return { type: "DELETED", object };
  return undefined;
}

function bookmark(store: GenericStore, revision: number, annotations?: Record<string, string>): ApiWatchEvent {
  const metadata: KubeObject["metadata"] = { resourceVersion: String(revision) };
  if (annotations) metadata.annotations = annotations;
  return { type: "BOOKMARK", object: { apiVersion: store.apiVersion, kind: store.definition.kind, metadata } };
}

function expiredStatus(requested: number, compacted: number): Status {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `too old resource version: ${requested} (${compacted})`,
    reason: "Expired",
    code: 410,
  };
}
