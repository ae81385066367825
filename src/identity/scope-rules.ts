// The deprecated scope.rules of an access key: Kubernetes-style rules over verbs, resources, names, namespaces and
// non-resource URLs. Rules limited to cluster or virtual cluster requests never match a management request.

import type { AccessKeyScopeRule } from "../apis/management/v1/ownedaccesskey-schema.ts";
import type { AuthorizationAttributes } from "../registry/types.ts";

/** The target of every request this server answers. */
const MANAGEMENT_TARGET = "Management";

function matchesUrl(patterns: readonly string[], path: string): boolean {
  return patterns.some((pattern) =>
    pattern === "*" ? true : pattern.endsWith("/*") ? path.startsWith(pattern.slice(0, -1)) : pattern === path,
  );
}

/** `pods`, `pods/log`, `*`, `*\/scale`, `pods/*`. */
function matchesResource(patterns: readonly string[], resource: string, subresource: string | undefined): boolean {
  const full = subresource ? `${resource}/${subresource}` : resource;
  return patterns.some((pattern) => {
    if (pattern === "*" || pattern === full) return true;
    if (subresource && pattern === `*/${subresource}`) return true;
    return subresource !== undefined && pattern === `${resource}/*`;
  });
}

export function ruleMatches(rule: AccessKeyScopeRule, request: AuthorizationAttributes): boolean {
  if (rule.cluster) return false;
  if (rule.virtualClusters?.length) return false;
  if (rule.requestTargets?.length && !rule.requestTargets.includes(MANAGEMENT_TARGET)) return false;
  const verbs = rule.verbs ?? [];
  if (verbs.length && !verbs.includes("*") && !verbs.includes(request.verb)) return false;
  const resources = rule.resources ?? [];
  const urls = rule.nonResourceURLs ?? [];
  if (!request.resourceRequest) {
    if (urls.length) return matchesUrl(urls, request.path ?? "");
    return resources.length === 0;
  }
  if (urls.length && resources.length === 0) return false;
  const namespaces = rule.namespaces ?? [];
  if (namespaces.length && !namespaces.includes(request.namespace ?? "")) return false;
  if (resources.length === 0) return true;
  return resources.some((entry) => {
    const group = entry.group ?? "";
    if (group !== "*" && group !== (request.group ?? "")) return false;
    const names = entry.resources ?? [];
    if (names.length && !matchesResource(names, request.resource ?? "", request.subresource)) return false;
    const objects = entry.resourceNames ?? [];
    return objects.length === 0 || (request.name !== undefined && objects.includes(request.name));
  });
}
