import { cloneJson } from "../patches/json-clone.ts";
import { IMPORTED_LABEL, IMPORTED_NAME_ANNOTATION, SYNCER_ANNOTATIONS } from "./constants.ts";
import type { WireObject } from "./types.ts";

/** Metadata the host sets or owns: not part of an imported copy. */
const DROPPED = ["uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "ownerReferences"];

/**
 * The virtual copy of a host ConfigMap or Secret imported by a reference patch: its content, labels and
 * annotations, named as the reference names it in the virtual cluster, labelled with the host namespace and
 * annotated with the host name, so the syncer knows it is imported (never synced back toward the host).
 */
export function importedVirtualObject(
  host: WireObject,
  kind: string,
  virtual: { namespace: string; name: string },
  hostName: { namespace: string; name: string },
): WireObject {
  const copy = cloneJson(host) as WireObject;
  const metadata = { ...copy.metadata };
  for (const field of DROPPED) delete metadata[field as keyof typeof metadata];
  delete metadata.deletionTimestamp;
  delete metadata.deletionGracePeriodSeconds;
  delete metadata.finalizers;
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata.annotations ?? {})) {
    if (!SYNCER_ANNOTATIONS.has(key)) annotations[key] = value;
  }
  annotations[IMPORTED_NAME_ANNOTATION] = hostName.name;
  metadata.annotations = annotations;
  metadata.labels = { ...metadata.labels, [IMPORTED_LABEL]: hostName.namespace };
  metadata.name = virtual.name;
  metadata.namespace = virtual.namespace;
  return { ...copy, apiVersion: "v1", kind, metadata };
}
