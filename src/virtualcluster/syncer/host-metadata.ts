import type { ObjectMeta, OwnerReference } from "../../apimachinery/types.ts";
import { cloneJson } from "../patches/json-clone.ts";
import { MANAGED_BY_LABEL, MARKER_LABEL_KEYS, NAMESPACE_LABEL } from "../translate/constants.ts";
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

/** True when an annotation key of a virtual object is copied to the host (and may come back). */
export function isCopiedAnnotation(key: string): boolean {
  return key !== LEADER_ANNOTATION && !SYNCER_ANNOTATIONS.has(key);
}

/** The user's annotations of the host copy: the virtual ones except the leader annotation and the syncer's own. */
export function userAnnotations(virtual: WireObject): LabelMap {
  const result: LabelMap = {};
  for (const [key, value] of Object.entries(virtual.metadata?.annotations ?? {})) {
    if (isCopiedAnnotation(key)) putLabel(result, key, value);
  }
  return result;
}

/**
 * Metadata of the host copy of a namespaced virtual object before patches: translated name and namespace,
 * server-set fields reset, the user's annotations and translated labels. The syncer's marks (marker labels, its
 * annotations, the owner reference) are not here: withSyncerMarks() adds them after the patches.
 */
export function hostMetadata(virtual: WireObject, options: HostObjectOptions): ObjectMeta {
  const { translator } = options;
  const source = virtual.metadata ?? {};
  const virtualNamespace = source.namespace ?? "";
  const metadata = cloneJson(source) as ObjectMeta;
  for (const field of RESET_FIELDS) delete metadata[field];
  metadata.name = translator.hostName(source.name ?? "", virtualNamespace);
  metadata.namespace = translator.hostNamespace(virtualNamespace);
  const annotations = userAnnotations(virtual);
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  const labels = translator.hostLabels(source.labels, virtualNamespace);
  for (const key of MARKER_LABEL_KEYS) delete labels[key];
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  else delete metadata.labels;
  return metadata;
}

/**
 * The syncer's marks, added to a (patched) host object last so no patch can change them: the marker labels, the
 * annotations naming the virtual object and the copied keys (`managed-annotations`, the user's annotation keys as
 * they are after the patches), and the owner reference to the virtual cluster's host Service when known (a
 * controller reference only when the virtual object itself has a controller, as upstream does).
 */
export function withSyncerMarks(
  host: WireObject,
  virtual: WireObject,
  /** The object-kind annotation's value, e.g. `/v1, Kind=Endpoints`. */
  objectKind: string,
  options: HostObjectOptions,
): WireObject {
  const { translator, owner } = options;
  const source = virtual.metadata ?? {};
  const virtualNamespace = source.namespace ?? "";
  const metadata: ObjectMeta = { ...host.metadata };
  const name = translator.hostName(source.name ?? "", virtualNamespace);
  const namespace = translator.hostNamespace(virtualNamespace);
  metadata.name = name;
  metadata.namespace = namespace;
  const labels: LabelMap = {};
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    if (!MARKER_LABEL_KEYS.includes(key)) putLabel(labels, key, value as string);
  }
  putLabel(labels, MANAGED_BY_LABEL, translator.virtualClusterName);
  if (virtualNamespace) putLabel(labels, NAMESPACE_LABEL, virtualNamespace);
  metadata.labels = labels;
  const annotations: LabelMap = {};
  for (const [key, value] of Object.entries(metadata.annotations ?? {})) {
    if (isCopiedAnnotation(key)) putLabel(annotations, key, value as string);
  }
  const copied = Object.keys(annotations).sort();
  annotations[OBJECT_NAME_ANNOTATION] = source.name ?? "";
  annotations[OBJECT_NAMESPACE_ANNOTATION] = virtualNamespace;
  annotations[OBJECT_UID_ANNOTATION] = source.uid ?? "";
  annotations[OBJECT_KIND_ANNOTATION] = objectKind;
  annotations[OBJECT_HOST_NAME_ANNOTATION] = name;
  annotations[OBJECT_HOST_NAMESPACE_ANNOTATION] = namespace;
  if (copied.length > 0) annotations[MANAGED_ANNOTATIONS_ANNOTATION] = copied.join("\n");
  metadata.annotations = annotations;
  delete metadata.ownerReferences;
  if (owner) {
    const controlled = (source.ownerReferences ?? []).some((reference) => reference.controller === true);
    metadata.ownerReferences = [
      { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: controlled },
    ];
  }
  return { ...host, metadata };
}
