// Audit policy evaluation with the Kubernetes semantics (k8s.io/apiserver/pkg/audit/policy/checker.go): the first
// rule matching a request gives its level; no match is level None; omitted stages are the union of the policy's
// and the rule's. Plus the platform's fields: requestTargets (every request here is a Management request) and
// clusters (only cluster requests match, so a rule naming clusters matches nothing here).

import type { AuditPolicy, AuditPolicyRule } from "../config/types.ts";
import type { AuditLevel, AuditRequestInfo, AuditStage, AuditUser } from "./types.ts";

export interface AuditDecision {
  level: AuditLevel;
  omitStages: ReadonlySet<AuditStage>;
}

export interface AuditAttributes {
  user: AuditUser;
  info: AuditRequestInfo;
}

const REQUEST_TARGET = "Management";
const NONE: AuditDecision = { level: "None", omitStages: new Set() };
const LEVEL_RANK: Record<AuditLevel, number> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 };

export function levelAtLeast(level: AuditLevel, minimum: AuditLevel): boolean {
  return LEVEL_RANK[level] >= LEVEL_RANK[minimum];
}

export function lowerLevel(a: AuditLevel, b: AuditLevel): AuditLevel {
  return LEVEL_RANK[a] <= LEVEL_RANK[b] ? a : b;
}

/** "*", an exact path, or a prefix ending in "*". */
function pathMatches(path: string, spec: string): boolean {
  if (spec === "*" || spec === path) return true;
  return spec.endsWith("*") && path.startsWith(spec.slice(0, -1));
}

function resourceMatches(rule: AuditPolicyRule, info: AuditRequestInfo): boolean {
  if (!info.resourceRequest) return false;
  if (rule.namespaces?.length && !rule.namespaces.includes(info.namespace)) return false;
  if (!rule.resources?.length) return true;
  const combined = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  for (const gr of rule.resources) {
    if ((gr.group ?? "") !== info.group) continue;
    if (!gr.resources?.length) return true;
    if (gr.resourceNames?.length && !gr.resourceNames.includes(info.name)) continue;
    for (const resource of gr.resources) {
      if (resource === combined || resource === "*") return true;
      if (info.subresource && resource.startsWith("*/") && resource.slice(2) === info.subresource) return true;
      if (resource.endsWith("/*") && resource.slice(0, -2) === info.resource) return true;
    }
  }
  return false;
}

export function ruleMatches(rule: AuditPolicyRule, { user, info }: AuditAttributes): boolean {
  if (rule.users?.length && !rule.users.includes(user.name)) return false;
  if (rule.userGroups?.length && !user.groups.some((group) => rule.userGroups?.includes(group))) return false;
  if (rule.verbs?.length && !rule.verbs.includes(info.verb)) return false;
  if (rule.requestTargets?.length && !rule.requestTargets.includes(REQUEST_TARGET)) return false;
  if (rule.clusters?.length) return false;
  if (rule.namespaces?.length || rule.resources?.length) return resourceMatches(rule, info);
  if (rule.nonResourceURLs?.length) {
    return !info.resourceRequest && rule.nonResourceURLs.some((spec) => pathMatches(info.path, spec));
  }
  return true;
}

/** A policy ready to evaluate: each rule's decision is made once, so evaluating allocates nothing. */
export type CompiledAuditPolicy = (attributes: AuditAttributes) => AuditDecision;

export function compileAuditPolicy(policy: AuditPolicy): CompiledAuditPolicy {
  const rules = (policy.rules ?? []).map((rule) => ({
    rule,
    decision: {
      level: rule.level,
      omitStages: new Set<AuditStage>([...(policy.omitStages ?? []), ...(rule.omitStages ?? [])]),
    } satisfies AuditDecision,
  }));
  return (attributes) => {
    for (const { rule, decision } of rules) if (ruleMatches(rule, attributes)) return decision;
    return NONE;
  };
}

/** The level and omitted stages for a request: the first matching rule wins; none matching is level None. */
export function evaluateAuditPolicy(policy: AuditPolicy, attributes: AuditAttributes): AuditDecision {
  return compileAuditPolicy(policy)(attributes);
}
