import type { ObjectMeta, OwnerReference } from "../../apimachinery/types.ts";
import { cloneJson } from "../patches/json-clone.ts";
import { type LabelMap, putLabel } from "../translate/labels.ts";
import type { Translator } from "../translate/translator.ts";
import {
  LEADER_ANNOTATION,
  MANAGED_ANNOTATIONS_ANNOTATION,
  OBJECT_HOST_NAME_ANNOTATION,
  OBJECT_HOST_NAMESPACE_ANNOTATION,
  OBJECT_KIND_ANNOTATION,
  OBJECT_NAME_ANNOTATION,
  OBJECT_NAMESPACE_ANNOTATION,
  OBJECT_UID_ANNOTATION,
  SYNCER_ANNOTATIONS,
} from "./constants.ts";
import type { WireObject } from "./types.ts";

export interface HostObjectOptions {
  translator: Translator;
  /** The virtual cluster's own host Service, when known: every synced object is owned by it. */
  owner?: OwnerReference;
}

/** Metadata fields the host server sets for itself: never carried over from the virtual object. */
const RESET_FIELDS = [
  "generateName",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "ownerReferences",
  "finalizers",
  "managedFields",
  "selfLink",
] as const;

/** Go's GroupVersionKind.String() of a core/v1 kind, the form of the object-kind annotation. */
export const objectKindAnnotation = (kind: string): string => `/v1, Kind=${kind}`;

/** True when an annotation key of a virtual object is copied to the host (and may come back). */
export function isCopiedAnnotation(key: string): boolean {
  return key !== LEADER_ANNOTATION && !SYNCER_ANNOTATIONS.has(key);
}

/**
 * Annotations of the host copy: the virtual ones except the leader annotation and the syncer's own (so a virtual
 * object cannot forge them), then the syncer's annotations naming the virtual object and the copied keys.
 */
export function hostAnnotations(
  virtual: WireObject,
  kind: string,
  host: { name: string; namespace: string },
): LabelMap {
  const result: LabelMap = {};
  const copied: string[] = [];
  for (const [key, value] of Object.entries(virtual.metadata?.annotations ?? {})) {
    if (!isCopiedAnnotation(key)) continue;
    putLabel(result, key, value);
    copied.push(key);
  }
  result[OBJECT_NAME_ANNOTATION] = virtual.metadata?.name ?? "";
  result[OBJECT_NAMESPACE_ANNOTATION] = virtual.metadata?.namespace ?? "";
  result[OBJECT_UID_ANNOTATION] = virtual.metadata?.uid ?? "";
  result[OBJECT_KIND_ANNOTATION] = objectKindAnnotation(kind);
  result[OBJECT_HOST_NAME_ANNOTATION] = host.name;
  result[OBJECT_HOST_NAMESPACE_ANNOTATION] = host.namespace;
  if (copied.length > 0) result[MANAGED_ANNOTATIONS_ANNOTATION] = copied.sort().join("\n");
  return result;
}

/**
 * Metadata of the host copy of a namespaced virtual object: translated name and namespace, server-set fields reset,
 * annotations and labels translated, and the owner reference to the virtual cluster's host Service when known
 * (a controller reference only when the virtual object itself has a controller, as upstream does).
 */
export function hostMetadata(virtual: WireObject, kind: string, options: HostObjectOptions): ObjectMeta {
  const { translator, owner } = options;
  const source = virtual.metadata ?? {};
  const virtualName = source.name ?? "";
  const virtualNamespace = source.namespace ?? "";
  const metadata = cloneJson(source) as ObjectMeta;
  for (const field of RESET_FIELDS) delete metadata[field];
  const name = translator.hostName(virtualName, virtualNamespace);
  const namespace = translator.hostNamespace(virtualNamespace);
  metadata.name = name;
  metadata.namespace = namespace;
  metadata.annotations = hostAnnotations(virtual, kind, { name, namespace });
  metadata.labels = translator.hostLabels(source.labels, virtualNamespace);
  if (owner) {
    const controlled = (source.ownerReferences ?? []).some((reference) => reference.controller === true);
    metadata.ownerReferences = [
      { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: controlled },
    ];
  }
  return metadata;
}
