// Deleting a namespace, as kube-apiserver does it: the namespace is not removed but marked — deletionTimestamp set,
// status.phase Terminating — and kept by its `kubernetes` finalizer (spec.finalizers) until the namespace controller
// has deleted everything in it. Our generic store holds objects only by metadata.finalizers, so the mark also adds
// NAMESPACE_CONTENT_FINALIZER there; the controller removes both once the namespace is empty.

import { errors, isStatusError } from "../apimachinery/errors.ts";
import { NAMESPACE_TERMINATING, type Namespace } from "../apis/core/v1/namespace.ts";
import type { GenericStore } from "../registry/store.ts";
import { formatTimestamp } from "../registry/time.ts";
import type {
  DeleteOptions,
  DeleteResult,
  ListOptions,
  ObjectRef,
  RequestContext,
  ResourceStore,
} from "../registry/types.ts";
import { StorageError } from "../storage/types.ts";

export const NAMESPACE_CONTENT_FINALIZER = "virtualcluster.platform.sh/namespace-content";

async function deleteNamespace(
  store: GenericStore,
  context: RequestContext,
  ref: ObjectRef,
  options: DeleteOptions,
): Promise<DeleteResult> {
  for (;;) {
    const current = await store.storage.get(store.key(ref));
    if (!current) throw errors.notFound(store.groupResource, ref.name);
    const namespace = store.decode(current) as Namespace;
    store.checkDeletePreconditions(namespace, options);
    await store.definition.strategy.beforeDelete?.(namespace, context);
    if (namespace.metadata.deletionTimestamp) return { removed: false, object: namespace };
    if (!namespace.spec?.finalizers?.length) return store.delete(context, ref, options);

    const next = structuredClone(namespace);
    const meta = next.metadata;
    meta.deletionTimestamp = formatTimestamp(context.now);
    meta.deletionGracePeriodSeconds = 0;
    meta.generation = (meta.generation ?? 0) + 1;
    meta.finalizers = [...new Set([...(meta.finalizers ?? []), NAMESPACE_CONTENT_FINALIZER])];
    next.status = { ...next.status, phase: NAMESPACE_TERMINATING };
    if (options.dryRun) return { removed: false, object: next };
    try {
      const record = await store.storage.update(current.key, store.encode(next), current.revision);
      return { removed: false, object: store.decode(record) };
    } catch (error) {
      if (error instanceof StorageError && error.storageCode === "Conflict") continue;
      throw store.mapStorageError(error, ref.name);
    }
  }
}

/** The namespaces store served over HTTP: the generic store with kube-apiserver's delete. */
export function namespaceStore(store: GenericStore): ResourceStore {
  const remove = (context: RequestContext, ref: ObjectRef, options: DeleteOptions) =>
    deleteNamespace(store, context, ref, options);
  return {
    definition: store.definition,
    get: (context, ref) => store.get(context, ref),
    list: (context, options) => store.list(context, options),
    watch: (context, options, sink) => store.watch(context, options, sink),
    create: (context, namespace, object, options) => store.create(context, namespace, object, options),
    update: (context, ref, object, options) => store.update(context, ref, object, options),
    patch: (context, ref, type, body, options) => store.patch(context, ref, type, body, options),
    getEncoded: (context, ref) => store.getEncoded(context, ref),
    listEncoded: (context, options) => store.listEncoded(context, options),
    createEncoded: (context, namespace, object, options) => store.createEncoded(context, namespace, object, options),
    delete: remove,
    async deleteCollection(context: RequestContext, list: ListOptions, options: DeleteOptions) {
      const items = [];
      for (const item of (await store.list(context, list)).items) {
        try {
          items.push(
            (await remove(context, { name: item.metadata.name ?? "" }, { ...options, preconditions: undefined }))
              .object,
          );
        } catch (error) {
          if (!(isStatusError(error) && error.reason === "NotFound")) throw error;
        }
      }
      return { apiVersion: store.apiVersion, kind: "NamespaceList", metadata: {}, items };
    },
  };
}
