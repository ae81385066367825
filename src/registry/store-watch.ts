// WATCH for the generic store: optional initial state as ADDED events, then storage events converted to API events
// with selector transitions (an object moving out of the selection is DELETED for this watcher), bookmarks, and
// 410 Expired when the requested revision is older than the compacted history.

import type { KubeObject, Status } from "../apimachinery/types.ts";
import type { StoredRecord, WatchCloseReason, WatchEvent } from "../storage/types.ts";
import { compileSelector } from "./compile-selector.ts";
import { resourcePrefix } from "./keys.ts";
import { parseResourceVersion } from "./resource-version.ts";
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
  const selector = compileSelector(d, options.labelSelector, options.fieldSelector, options.visible);
  const matches = selector.matchesAll ? undefined : selector.matches;
  const prefix = resourcePrefix(d, options.namespace);
  const requested = options.resourceVersion ? parseResourceVersion(options.resourceVersion) : 0;
  const initial = requested === 0 || options.sendInitialEvents === true;
  // When every caller reads the same object, the events are shared by all watchers too (one object, one encoding
  // per event however many watch); otherwise each watcher presents the shared decode for its own caller.
  const shared = store.encoder.callerIndependent;
  const decode = shared
    ? (record: StoredRecord) => store.presentShared(record, context)
    : (record: StoredRecord) => store.present(store.decodeShared(record), context);
  const eventOf = shared ? sharedEvent : ownEvent;

  let lastRevision = requested;
  if (initial) {
    const page = await store.storage.list({ prefix });
    lastRevision = page.revision;
    for (const record of page.records) {
      const object = store.decode(record);
      if (!matches || matches(object)) sink.send({ type: "ADDED", object: store.present(object, context) });
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
        const apiEvent = convert(event, decode, matches, eventOf);
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

type EventOf = (type: "ADDED" | "MODIFIED" | "DELETED", record: StoredRecord, object: KubeObject) => ApiWatchEvent;

function ownEvent(type: "ADDED" | "MODIFIED" | "DELETED", _record: StoredRecord, object: KubeObject): ApiWatchEvent {
  return { type, object };
}

/** One event object per record and type, shared by every watcher (so the HTTP layer encodes it once). */
const sharedEvents = new WeakMap<StoredRecord, Partial<Record<"ADDED" | "MODIFIED" | "DELETED", ApiWatchEvent>>>();

function sharedEvent(type: "ADDED" | "MODIFIED" | "DELETED", record: StoredRecord, object: KubeObject): ApiWatchEvent {
  let byType = sharedEvents.get(record);
  if (!byType) {
    byType = {};
    sharedEvents.set(record, byType);
  }
  let event = byType[type];
  if (!event) {
    event = { type, object };
    byType[type] = event;
  }
  return event;
}

/** One storage event as this watcher sees it; `matches` is undefined when the watch has no selector (all match). */
function convert(
  event: WatchEvent,
  decode: (record: StoredRecord) => KubeObject,
  matches: ((object: KubeObject) => boolean) | undefined,
  eventOf: EventOf,
): ApiWatchEvent | undefined {
  const record = event.record;
  const object = decode(record);
  if (!matches) {
    // Runs once per watcher and event: without a selector the previous object is never decoded.
    const type = event.type === "delete" ? "DELETED" : event.type === "update" && event.previous ? "MODIFIED" : "ADDED";
    return eventOf(type, record, object);
  }
  if (event.type === "create") return matches(object) ? eventOf("ADDED", record, object) : undefined;
  if (event.type === "delete") return matches(object) ? eventOf("DELETED", record, object) : undefined;
  const now = matches(object);
  const previous = event.previous ? decode(event.previous) : undefined;
  const before = previous ? matches(previous) : false;
  if (now && before) return eventOf("MODIFIED", record, object);
  if (now) return eventOf("ADDED", record, object);
  if (previous && before) return eventOf("DELETED", record, lastSeen(previous, object));
  return undefined;
}

/**
 * What a watcher gets when an object leaves its selection (a label changed, or the caller lost the right to see it):
 * the version it last saw, at this write's resourceVersion, as kube-apiserver sends it. Never the new version: a
 * member removed from a project must not read the project as it is after the removal.
 */
function lastSeen(previous: KubeObject, current: KubeObject): KubeObject {
  return { ...previous, metadata: { ...previous.metadata, resourceVersion: current.metadata?.resourceVersion } };
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
