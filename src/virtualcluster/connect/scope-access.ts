// Reading an access-key scope from the virtual cluster's side: does a key carry the role `virtualcluster` (needed to
// connect), and does a user's key or token reach this one virtual cluster (needed to use it).

import type { AccessKeyScope } from "./platform-api.ts";

const ROLE = "virtualcluster";

/** The role must be listed in scope.roles; an unscoped key (even an admin's) does not carry it. */
export function hasVirtualClusterRole(scope: AccessKeyScope | undefined): boolean {
  return (scope?.roles ?? []).some((entry) => entry.role === ROLE);
}

const matches = (pattern: string | undefined, value: string) => pattern === "*" || pattern === value;

/**
 * Whether a user credential with this scope may use the virtual cluster `name` of `project`: no scope means the
 * owner's full rights; otherwise a projects entry for the project or a virtualClusters entry for this cluster.
 */
export function scopeReachesVirtualCluster(
  scope: AccessKeyScope | undefined,
  target: { project: string; name: string },
): boolean {
  if (!scope || isEmptyScope(scope)) return true;
  if ((scope.projects ?? []).some((entry) => matches(entry.project, target.project))) return true;
  return (scope.virtualClusters ?? []).some(
    (entry) => matches(entry.project, target.project) && matches(entry.virtualCluster, target.name),
  );
}

function isEmptyScope(scope: AccessKeyScope): boolean {
  return Object.values(scope).every(
    (value) => value === undefined || value === false || (Array.isArray(value) && value.length === 0),
  );
}
