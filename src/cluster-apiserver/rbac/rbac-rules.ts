// Whether one RBAC PolicyRule allows a request (k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go).

import type { PolicyRule } from "../../apis/rbac/v1/common.ts";
import type { AuthorizationAttributes } from "../../registry/types.ts";

const ALL = "*";

const has = (values: string[] | undefined, value: string) => (values ?? []).some((v) => v === ALL || v === value);

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const ruleResource of rule.resources ?? []) {
    if (ruleResource === ALL || ruleResource === combined) return true;
    if (subresource && ruleResource === `*/${subresource}`) return true;
  }
  return false;
}

function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === ALL || url === path) return true;
    // Only a final "*" is a wildcard: "/apis/*" covers "/apis/anything/below".
    if (url.endsWith("*") && path.startsWith(url.slice(0, -1))) return true;
  }
  return false;
}

export function ruleAllows(rule: PolicyRule, request: AuthorizationAttributes): boolean {
  if (!has(rule.verbs, request.verb)) return false;
  if (!request.resourceRequest) return nonResourceUrlMatches(rule, request.path ?? "");
  if (!has(rule.apiGroups, request.group ?? "")) return false;
  if (!resourceMatches(rule, request.resource ?? "", request.subresource ?? "")) return false;
  // resourceNames restrict to named objects; a request without a name (list, create) never matches them.
  if (rule.resourceNames?.length) return Boolean(request.name) && rule.resourceNames.includes(request.name ?? "");
  return true;
}
