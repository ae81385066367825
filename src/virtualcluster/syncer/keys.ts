import type { SyncedResource } from "./types.ts";

/**
 * A queue key: `<resource>/<virtual namespace>/<virtual name>`. A managed host object that cannot be traced back
 * to a virtual object gets `<resource>//<host name>` (an empty namespace never names a virtual object).
 */
export interface SyncKey {
  resource: SyncedResource;
  namespace: string;
  name: string;
}

export const formatKey = (resource: SyncedResource, namespace: string, name: string): string =>
  `${resource}/${namespace}/${name}`;

export const orphanKey = (resource: SyncedResource, hostName: string): string => `${resource}//${hostName}`;

export function parseKey(key: string): SyncKey {
  const first = key.indexOf("/");
  const second = key.indexOf("/", first + 1);
  return {
    resource: key.slice(0, first) as SyncedResource,
    namespace: key.slice(first + 1, second),
    name: key.slice(second + 1),
  };
}

/** True for a key of a host object without a virtual counterpart. */
export const isOrphan = (key: SyncKey): boolean => key.namespace === "";
