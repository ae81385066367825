import type { WireObject } from "./types.ts";

/**
 * An object as the syncer keeps it, from an informer or as the answer to a write: without metadata.managedFields, as
 * client-go informers with the managed-fields transform keep them. Nothing in the syncer reads them, and their field
 * sets were about half of every object kept (the caches, and the answer to a create, kept per key until the informer
 * delivers it). Changes `object` (a freshly parsed answer); the metadata is replaced, not deleted from, so it keeps
 * its fast shape.
 */
export function withoutManagedFields(object: WireObject): WireObject {
  const metadata = object.metadata;
  if (metadata?.managedFields === undefined) return object;
  const { managedFields: _fields, ...rest } = metadata;
  object.metadata = rest;
  return object;
}
