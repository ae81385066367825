// What the signed-in user may do, from the server's own answer (SelfSubjectRulesReview, the rules behind `kubectl
// auth can-i --list`): every page asks `can(...)` and shows only the actions it allows. The server still decides
// every request; this only keeps the console from offering what it would refuse.

export const GROUP = "management.platform.sh";

export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface Rules {
  resourceRules?: ResourceRule[];
  nonResourceRules?: NonResourceRule[];
}

export interface Permissions {
  /** `resource` may name a subresource: "users/password". Without `name`: on every object of the kind. */
  can(verb: string, resource: string, name?: string): boolean;
  /** A non-resource URL: "/metrics". */
  canGet(path: string): boolean;
}

const has = (list: string[] | undefined, value: string) => !!list && (list.includes("*") || list.includes(value));

function urlMatches(pattern: string, path: string): boolean {
  if (pattern === "*" || pattern === path) return true;
  return pattern.endsWith("*") && path.startsWith(pattern.slice(0, -1));
}

/** Permissions for rules in the management group (and "*"). */
export function permissionsOf(rules: Rules, group = GROUP): Permissions {
  const resourceRules = rules.resourceRules ?? [];
  const nonResourceRules = rules.nonResourceRules ?? [];
  return {
    can(verb, resource, name) {
      return resourceRules.some((rule) => {
        if (!has(rule.verbs, verb) || !has(rule.apiGroups, group) || !has(rule.resources, resource)) return false;
        const names = rule.resourceNames ?? [];
        if (names.length === 0) return true;
        return name !== undefined && names.includes(name);
      });
    },
    canGet(path) {
      return nonResourceRules.some(
        (rule) => has(rule.verbs, "get") && (rule.nonResourceURLs ?? []).some((pattern) => urlMatches(pattern, path)),
      );
    },
  };
}
