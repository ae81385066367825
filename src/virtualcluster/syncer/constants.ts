import { LABEL_DOMAIN } from "../translate/constants.ts";

// Annotations the syncer puts on host objects (reference: "Endpoints syncer").

/** Name of the virtual object a host object was synced from. */
export const OBJECT_NAME_ANNOTATION = `${LABEL_DOMAIN}/object-name`;
/** Namespace of the virtual object. */
export const OBJECT_NAMESPACE_ANNOTATION = `${LABEL_DOMAIN}/object-namespace`;
/** UID of the virtual object. */
export const OBJECT_UID_ANNOTATION = `${LABEL_DOMAIN}/object-uid`;
/** Kind of the virtual object in Go's GroupVersionKind form, e.g. `/v1, Kind=Endpoints`. */
export const OBJECT_KIND_ANNOTATION = `${LABEL_DOMAIN}/object-kind`;
/** Name of the host object itself. */
export const OBJECT_HOST_NAME_ANNOTATION = `${LABEL_DOMAIN}/object-host-name`;
/** Namespace of the host object itself. */
export const OBJECT_HOST_NAMESPACE_ANNOTATION = `${LABEL_DOMAIN}/object-host-namespace`;
/** The annotation keys copied from the virtual object, sorted and newline-joined. */
export const MANAGED_ANNOTATIONS_ANNOTATION = `${LABEL_DOMAIN}/managed-annotations`;

/** Never copied to the host (leader election state of the virtual cluster's own components). */
export const LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader";

/** Annotations only the syncer writes: never copied from a virtual object and never copied back. */
export const SYNCER_ANNOTATIONS: ReadonlySet<string> = new Set([
  OBJECT_NAME_ANNOTATION,
  OBJECT_NAMESPACE_ANNOTATION,
  OBJECT_UID_ANNOTATION,
  OBJECT_KIND_ANNOTATION,
  OBJECT_HOST_NAME_ANNOTATION,
  OBJECT_HOST_NAMESPACE_ANNOTATION,
  MANAGED_ANNOTATIONS_ANNOTATION,
]);

/** Reason of the Warning event recorded on a virtual object whose sync failed. */
export const SYNC_ERROR_REASON = "SyncError";
/** source.component and reportingComponent of the syncer's events. */
export const SYNCER_COMPONENT = "virtualcluster-syncer";

/** Label on a virtual object imported from the host by a reference patch (value: the host namespace). */
export const IMPORTED_LABEL = `${LABEL_DOMAIN}/imported-from`;
/** Annotation on an imported virtual object naming its host object. */
export const IMPORTED_NAME_ANNOTATION = `${LABEL_DOMAIN}/imported-name`;
/**
 * Consecutive writes of one object caused only by the syncer's own previous write (neither side changed by anyone
 * else) before the object is stopped as not converging. A patch that converges needs one.
 */
export const MAX_SELF_TRIGGERED_WRITES = 5;
