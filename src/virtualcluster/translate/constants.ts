// Label keys the syncer puts on host objects (reference: "Labels on synced objects").

export const LABEL_DOMAIN = "virtualcluster.platform.sh";
/** Host label naming the virtual cluster that owns a synced object. */
export const MANAGED_BY_LABEL = `${LABEL_DOMAIN}/managed-by`;
/** Host label holding the virtual namespace of a synced object. */
export const NAMESPACE_LABEL = `${LABEL_DOMAIN}/namespace`;
/** Host label naming the controller of a synced object. */
export const CONTROLLED_BY_LABEL = `${LABEL_DOMAIN}/controlled-by`;
/** Prefix of the rewritten form of a reserved label key. */
export const LABEL_PREFIX = `${LABEL_DOMAIN}/label`;

/** Virtual label keys that collide with the host markers and are therefore rewritten on the host. */
export const RESERVED_LABEL_KEYS: readonly string[] = [
  "release",
  NAMESPACE_LABEL,
  MANAGED_BY_LABEL,
  CONTROLLED_BY_LABEL,
];

/** Annotation on host objects naming the virtual namespace of the object. */
export const OBJECT_NAMESPACE_ANNOTATION = `${LABEL_DOMAIN}/object-namespace`;

/** Host-only marker labels: never copied back into the virtual cluster. */
export const MARKER_LABEL_KEYS: readonly string[] = [NAMESPACE_LABEL, MANAGED_BY_LABEL, CONTROLLED_BY_LABEL];
