// The NamespaceLifecycle admission rule of kube-apiserver for every namespaced kind: nothing is created in a
// namespace that does not exist (404 `namespaces "x" not found`) or is being deleted (403). Applied by wrapping
// each definition's prepareForCreate, so it runs for POST and for server-side apply that creates.

import { errors } from "../apimachinery/errors.ts";
import { CORE_GROUP } from "../apis/core/v1/common.ts";
import { isTerminating, type Namespace, namespaceDefinition } from "../apis/core/v1/namespace.ts";
import { objectKey } from "../registry/keys.ts";
import type { RequestContext, ResourceDefinition } from "../registry/types.ts";
import type { KeyValueStore, StoredRecord } from "../storage/types.ts";

const NAMESPACES = { group: CORE_GROUP, resource: "namespaces" };

/** Whether a stored Namespace is terminating, per record: the store hands out the same record until it changes. */
const terminating = new WeakMap<StoredRecord, boolean>();
const isTerminatingRecord = (record: StoredRecord) => {
  let known = terminating.get(record);
  if (known === undefined) {
    known = isTerminating(JSON.parse(record.value) as Namespace);
    terminating.set(record, known);
  }
  return known;
};

export async function checkNamespaceOpen(
  storage: KeyValueStore,
  definition: ResourceDefinition,
  namespace: string | undefined,
  name: string,
): Promise<void> {
  if (!namespace) return; // the generic metadata rules report the missing namespace
  const record = await storage.get(objectKey(namespaceDefinition, undefined, namespace));
  if (!record) throw errors.notFound(NAMESPACES, namespace);
  if (isTerminatingRecord(record)) {
    throw errors.forbidden(
      { group: definition.group, resource: definition.plural },
      name,
      `unable to create new content in namespace ${namespace} because it is being terminated`,
    );
  }
}

/** The definition with the namespace check before its own prepareForCreate (cluster-scoped kinds unchanged). */
export function withNamespaceLifecycle<T extends ResourceDefinition>(definition: T, storage: KeyValueStore): T {
  if (!definition.namespaced || definition.action) return definition;
  const strategy = definition.strategy;
  const prepare = strategy.prepareForCreate;
  return {
    ...definition,
    strategy: {
      ...strategy,
      async prepareForCreate(object, context: RequestContext) {
        const meta = object.metadata;
        await checkNamespaceOpen(storage, definition, meta.namespace, meta.name ?? "");
        await prepare?.call(strategy, object, context);
      },
    },
  };
}
