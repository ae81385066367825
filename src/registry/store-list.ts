// LIST for the generic store: selectors, paging with continue tokens, and resourceVersion semantics
// (unset / "0": latest; N: not older than N; Exact: as of N; continue: the first page's revision).

import { decodeContinueToken, encodeContinueToken } from "../apimachinery/continue-token.ts";
import { errors } from "../apimachinery/errors.ts";
import { storageStatus } from "../apimachinery/storage-status.ts";
import type { KubeList, ListMeta } from "../apimachinery/types.ts";
import type { StoredRecord } from "../storage/types.ts";
import { type CompiledSelector, compileSelector } from "./compile-selector.ts";
import { EncodedJson } from "./encoded-json.ts";
import { resourcePrefix } from "./keys.ts";
import { parseResourceVersion } from "./resource-version.ts";
import type { GenericStore } from "./store.ts";
import type { ListOptions, RequestContext } from "./types.ts";

/** Records fetched per storage round trip when a selector filters the page. */
const FILTERED_CHUNK = 500;

/** One page of a list: its metadata and the items in whatever form the caller builds them. */
interface ListPage<T> {
  metadata: ListMeta;
  items: T[];
}

/** Turns a record into a list item, or undefined when a selector drops it. */
type ItemBuilder<T> = (record: StoredRecord) => T | undefined;

/** `selector` is the options' selectors compiled, for callers that list several pages with them. */
export async function listObjects(
  store: GenericStore,
  context: RequestContext,
  options: ListOptions,
  selector = compileSelector(store.definition, options.labelSelector, options.fieldSelector, options.visible),
): Promise<KubeList> {
  const page = await collect(store, options, selector, (record) => {
    const object = store.decode(record);
    if (!selector.matchesAll && !selector.matches(object)) return undefined;
    return store.present(object, context);
  });
  return {
    apiVersion: store.apiVersion,
    kind: `${store.definition.kind}List`,
    metadata: page.metadata,
    items: page.items,
  };
}

/** The same list as listObjects, as compact JSON built from each item's encoding (see store-encoded.ts). */
export async function listEncoded(
  store: GenericStore,
  context: RequestContext,
  options: ListOptions,
): Promise<EncodedJson> {
  const selector = compileSelector(store.definition, options.labelSelector, options.fieldSelector, options.visible);
  const encoder = store.encoder;
  const page = await collect(store, options, selector, (record) => {
    if (selector.matchesAll) return encoder.encode(record, context);
    const object = store.decode(record);
    return selector.matches(object) ? encoder.encode(record, context, object) : undefined;
  });
  const head = JSON.stringify({
    apiVersion: store.apiVersion,
    kind: `${store.definition.kind}List`,
    metadata: page.metadata,
  });
  return new EncodedJson(`${head.slice(0, -1)},"items":[${page.items.join(",")}]}`);
}

async function collect<T>(
  store: GenericStore,
  options: ListOptions,
  selector: CompiledSelector,
  build: ItemBuilder<T>,
): Promise<ListPage<T>> {
  const d = store.definition;
  const filtered = !selector.matchesAll;
  const prefix = resourcePrefix(d, options.namespace);
  const limit = options.limit && options.limit > 0 ? options.limit : 0;
  const { revision, startAfter } = await startingPoint(store, options, prefix);

  const list: ListPage<T> = { metadata: {}, items: [] };

  // kubectl wait/delete list one object by name: read its key alone. One read gives both the record and the
  // revision it is as of; a get() beside a currentRevision() could straddle a write, and a revision newer than the
  // item makes the watch from it miss that write (kubectl's wait for a deletion then hangs). The key sorts before
  // every longer key it is a prefix of, so the first record is the key's own if it exists.
  const single = selector.name;
  if (single !== undefined && !options.continue && revision === 0 && (options.namespace || !d.namespaced)) {
    const key = store.key({ namespace: options.namespace, name: single });
    const page = await store.storage.list({ prefix: key, limit: 1 });
    list.metadata.resourceVersion = String(page.revision);
    const record = page.records[0];
    if (record?.key === key) {
      const item = build(record);
      if (item !== undefined) list.items.push(item);
    }
    return list;
  }

  let readAt = revision;
  let cursor = startAfter;
  for (;;) {
    const pageSize = limit === 0 ? 0 : filtered ? Math.max(limit, FILTERED_CHUNK) : limit - list.items.length;
    let page: Awaited<ReturnType<typeof store.storage.list>>;
    try {
      page = await store.storage.list({ prefix, limit: pageSize, startAfter: cursor, revision: readAt });
    } catch (error) {
      const list = { revision: readAt, continued: Boolean(options.continue) };
      throw storageStatus(error, { resource: store.groupResource, name: "", list });
    }
    readAt = page.revision;
    list.metadata.resourceVersion = String(page.revision);
    const records = page.records;
    for (let i = 0; i < records.length; i++) {
      const item = build(records[i]);
      if (item === undefined) continue;
      list.items.push(item);
      if (limit > 0 && list.items.length === limit) {
        const after = records.length - 1 - i + page.remaining;
        if (after > 0) {
          list.metadata.continue = encodeContinueToken({ revision: page.revision, startAfter: records[i].key });
          // Upstream reports the count only when no selector filters it (it would be a guess otherwise).
          if (!filtered) list.metadata.remainingItemCount = after;
        }
        return list;
      }
    }
    if (page.remaining === 0 || records.length === 0) return list;
    cursor = records[records.length - 1].key;
  }
}

async function startingPoint(
  store: GenericStore,
  options: ListOptions,
  prefix: string,
): Promise<{ revision: number; startAfter?: string }> {
  if (options.resourceVersionMatch && !options.resourceVersion) {
    throw errors.badRequest("resourceVersionMatch is forbidden unless resourceVersion is provided");
  }
  if (options.continue) {
    if (options.resourceVersion && options.resourceVersion !== "0") {
      throw errors.badRequest("specifying resource version is not allowed when using continue");
    }
    if (options.resourceVersionMatch) {
      throw errors.badRequest("resourceVersionMatch is forbidden when continue is provided");
    }
    const position = decodeContinueToken(options.continue, prefix);
    return { revision: position.revision, startAfter: position.startAfter };
  }
  if (!options.resourceVersion) return { revision: 0 };
  const requested = parseResourceVersion(options.resourceVersion);
  if (options.resourceVersionMatch === "Exact") {
    if (requested === 0) throw errors.badRequest('resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
    const current = await store.storage.currentRevision();
    if (requested > current) throw tooLarge(requested, current);
    return { revision: requested };
  }
  if (requested > 0) {
    const current = await store.storage.currentRevision();
    if (requested > current) throw tooLarge(requested, current);
  }
  return { revision: 0 };
}

function tooLarge(requested: number, current: number) {
  return errors.timeout(`Too large resource version: ${requested}, current: ${current}`);
}
