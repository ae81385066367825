import { safeConcatName, shortHash } from "./safe-concat.ts";

export interface NamespacedName {
  name: string;
  namespace: string;
}

/** Maps object names and namespaces between a virtual cluster and its host. */
export interface NameMapper {
  readonly multiNamespace: boolean;
  /** Host name of a namespaced virtual object. */
  hostName(name: string, namespace: string): string;
  /** Host namespace of a virtual namespace. */
  hostNamespace(namespace: string): string;
  /**
   * Virtual name and namespace of a host object, or undefined when it cannot be derived. Hashes cannot be reversed,
   * so the mapper checks candidates: the optional lookup first, then the hint (usually the namespace of the virtual
   * object being written).
   */
  virtualName(hostName: string, hostNamespace: string, virtualNamespaceHint?: string): NamespacedName | undefined;
}

/** Optional reverse lookup, e.g. backed by the syncer's record of the names it created. */
export type ReverseNameLookup = (hostName: string, hostNamespace: string) => NamespacedName | undefined;

/**
 * Single-namespace mode: every virtual namespace maps into the virtual cluster's own host namespace, and names become
 * `<name>-x-<namespace>-x-<virtualClusterName>` (safely concatenated). An empty name stays empty.
 */
export function singleNamespaceNames(
  virtualClusterName: string,
  hostNamespace: string,
  lookup?: ReverseNameLookup,
): NameMapper {
  const hostName = (name: string, namespace: string): string =>
    name === "" ? "" : safeConcatName(name, "x", namespace, "x", virtualClusterName);
  return {
    multiNamespace: false,
    hostName,
    hostNamespace: () => hostNamespace,
    virtualName(name, namespace, hint) {
      if (namespace !== hostNamespace) return undefined;
      const found = lookup?.(name, namespace);
      if (found) return found;
      if (hint === undefined) return undefined;
      const suffix = `-x-${hint}-x-${virtualClusterName}`;
      if (!name.endsWith(suffix)) return undefined;
      const candidate = name.slice(0, -suffix.length);
      return candidate !== "" && hostName(candidate, hint) === name ? { name: candidate, namespace: hint } : undefined;
    },
  };
}

/**
 * Multi-namespace mode: names are kept; each virtual namespace gets its own host namespace,
 * `virtualcluster-<sha256(namespace)[0:8]>-<sha256(hostNamespace + "x" + virtualClusterName)[0:8]>`.
 */
export function multiNamespaceNames(
  virtualClusterName: string,
  hostNamespace: string,
  lookup?: ReverseNameLookup,
): NameMapper {
  const suffix = shortHash(`${hostNamespace}x${virtualClusterName}`, 8);
  const mapNamespace = (namespace: string): string =>
    namespace === "" ? "" : `virtualcluster-${shortHash(namespace, 8)}-${suffix}`;
  return {
    multiNamespace: true,
    hostName: (name) => name,
    hostNamespace: mapNamespace,
    virtualName(name, namespace, hint) {
      const found = lookup?.(name, namespace);
      if (found) return found;
      return hint !== undefined && mapNamespace(hint) === namespace ? { name, namespace: hint } : undefined;
    },
  };
}
