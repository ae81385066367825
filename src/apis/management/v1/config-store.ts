// The configs store as the HTTP layer serves it. POST of the platform config replaces the singleton when it
// exists (as the original's config endpoint does) instead of answering 409. And a write answers only once the
// written config is in force (read-your-writes: the next request already sees its effect), bounded by a timeout.

import { isStatusError } from "../../../apimachinery/errors.ts";
import { isPlainObject, type KubeObject } from "../../../apimachinery/types.ts";
import type { RequestContext, ResourceStore, WriteOptions } from "../../../registry/types.ts";
import { GROUP } from "./common.ts";
import { CONFIG_NAME } from "./config.ts";

/** Attempts when no resourceVersion was sent and another writer gets in between read and write. */
const UPSERT_ATTEMPTS = 5;
/** Longest a write waits for its config to be in force before answering anyway. */
const APPLY_WAIT_MS = 5_000;

export interface ConfigApplied {
  /** Resolves once the config of at least this resourceVersion is in force. */
  waitFor(revision: number): Promise<void>;
}

function isConfigStore(store: ResourceStore): boolean {
  return store.definition.group === GROUP && store.definition.plural === "configs";
}

function serving(inner: ResourceStore, applied: ConfigApplied | undefined): ResourceStore {
  const inForce = async <T extends KubeObject>(object: T): Promise<T> => {
    const revision = Number(object.metadata.resourceVersion);
    if (!applied || !Number.isFinite(revision)) return object;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, APPLY_WAIT_MS);
      timer.unref();
    });
    await Promise.race([applied.waitFor(revision), timeout]);
    clearTimeout(timer);
    return object;
  };
  const upsert = async (
    context: RequestContext,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions,
  ): Promise<KubeObject> => {
    const meta = isPlainObject(body) && isPlainObject(body.metadata) ? body.metadata : undefined;
    if (!meta || meta.name !== CONFIG_NAME) return inner.create(context, namespace, body, options);
    for (let attempt = 1; ; attempt++) {
      let current: KubeObject;
      try {
        current = await inner.get(context, { name: CONFIG_NAME });
      } catch (error) {
        if (isStatusError(error) && error.code === 404) return inner.create(context, namespace, body, options);
        throw error;
      }
      // A resourceVersion in the body is a precondition, as on PUT; without one the write replaces what is there.
      const resourceVersion = meta.resourceVersion ?? current.metadata.resourceVersion;
      const object = { ...(body as KubeObject), metadata: { ...meta, resourceVersion } };
      try {
        return await inner.update(context, { name: CONFIG_NAME }, object, options);
      } catch (error) {
        const retry = isStatusError(error) && error.code === 409 && !meta.resourceVersion && attempt < UPSERT_ATTEMPTS;
        if (!retry) throw error;
      }
    }
  };
  return {
    definition: inner.definition,
    get: (context, ref) => inner.get(context, ref),
    list: (context, options) => inner.list(context, options),
    watch: (context, options, sink) => inner.watch(context, options, sink),
    create: async (context, namespace, body, options) => inForce(await upsert(context, namespace, body, options)),
    update: async (context, ref, object, options) => inForce(await inner.update(context, ref, object, options)),
    patch: async (context, ref, type, body, options) => {
      const result = await inner.patch(context, ref, type, body, options);
      await inForce(result.object);
      return result;
    },
    delete: (context, ref, options) => inner.delete(context, ref, options),
    deleteCollection: (context, list, options) => inner.deleteCollection(context, list, options),
  };
}

/** The served stores, with the config store upserting on POST and (given `applied`) answering writes in force. */
export function withConfigUpsert(stores: ResourceStore[], applied?: ConfigApplied): ResourceStore[] {
  return stores.map((store) => (isConfigStore(store) ? serving(store, applied) : store));
}
