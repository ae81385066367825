import { LABEL_PREFIX, MARKER_LABEL_KEYS, RESERVED_LABEL_KEYS } from "./constants.ts";
import { safeConcatName, shortHash } from "./safe-concat.ts";

/** The host form of a reserved label key: safeConcat(prefix, virtual cluster name, "x", sha256(key)[0:10]). */
function rewrittenKey(key: string, virtualClusterName: string): string {
  return safeConcatName(LABEL_PREFIX, virtualClusterName, "x", shortHash(key));
}

/** Translates label keys between the virtual cluster and the host for one virtual cluster. */
export interface LabelKeyTranslator {
  /** Host key of a virtual label key (reserved keys are rewritten, others unchanged). */
  host(key: string): string;
  /** Virtual key of a host label key; undefined for the host-only markers, which never go back. */
  virtual(key: string): string | undefined;
  /** True when a key is the rewritten host form of a reserved key. */
  isRewritten(key: string): boolean;
}

export function labelKeyTranslator(virtualClusterName: string): LabelKeyTranslator {
  const toHost = new Map(RESERVED_LABEL_KEYS.map((key) => [key, rewrittenKey(key, virtualClusterName)]));
  const toVirtual = new Map([...toHost].map(([key, rewritten]) => [rewritten, key]));
  const markers = new Set(MARKER_LABEL_KEYS);
  return {
    host: (key) => toHost.get(key) ?? key,
    virtual: (key) => (markers.has(key) ? undefined : (toVirtual.get(key) ?? key)),
    isRewritten: (key) => toVirtual.has(key),
  };
}
