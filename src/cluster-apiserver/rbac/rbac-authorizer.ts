// The RBAC authorizer of the cluster API server: `system:masters` may do anything; everyone else is allowed what
// the (Cluster)Roles bound to them allow — ClusterRoleBindings everywhere, RoleBindings in their namespace.
// Authenticated callers are also members of `system:authenticated`, as upstream's authenticators make them.
// `rulesFor` (SelfSubjectRulesReview) lists the very rules `authorize` reads: the two walk one list of grants.

import type { PolicyRule } from "../../apis/rbac/v1/common.ts";
import type {
  AuthorizationAttributes,
  AuthorizationDecision,
  Authorizer,
  ResourceRule,
  SubjectRules,
  UserInfo,
} from "../../registry/types.ts";
import type { RbacIndex } from "./rbac-index.ts";
import { ruleAllows } from "./rbac-rules.ts";

export const MASTERS_GROUP = "system:masters";
const AUTHENTICATED = "system:authenticated";
const ANONYMOUS = "system:anonymous";
const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

const ALLOWED: AuthorizationDecision = { allowed: true };
const DENIED: AuthorizationDecision = { allowed: false };

/** The index keys naming this user: the user, its groups, and the service account it stands for. */
export function subjectsOf(user: UserInfo): string[] {
  const subjects = [`User:${user.name}`, ...user.groups.map((g) => `Group:${g}`)];
  if (user.name !== ANONYMOUS && !user.groups.includes(AUTHENTICATED)) subjects.push(`Group:${AUTHENTICATED}`);
  if (user.name.startsWith(SERVICE_ACCOUNT_PREFIX)) {
    const [namespace, name, ...rest] = user.name.slice(SERVICE_ACCOUNT_PREFIX.length).split(":");
    if (namespace && name && rest.length === 0) subjects.push(`ServiceAccount:${namespace}:${name}`);
  }
  return subjects;
}

export class RbacAuthorizer implements Authorizer {
  private readonly index: RbacIndex;
  private readonly fresh: () => Promise<void>;

  /** `fresh` resolves once the index has seen every committed write (a binding just created applies at once). */
  constructor(index: RbacIndex, fresh: () => Promise<void> = async () => {}) {
    this.index = index;
    this.fresh = fresh;
  }

  async authorize(request: AuthorizationAttributes): Promise<AuthorizationDecision> {
    if (request.user.groups.includes(MASTERS_GROUP)) return ALLOWED;
    await this.fresh();
    const namespace = request.resourceRequest ? request.namespace || undefined : undefined;
    for (const { rule, clusterWide } of this.grants(request.user, namespace)) {
      // Non-resource URLs are granted only cluster-wide.
      if (!request.resourceRequest && !clusterWide) continue;
      if (ruleAllows(rule, request)) return ALLOWED;
    }
    return DENIED;
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<SubjectRules> {
    if (user.groups.includes(MASTERS_GROUP)) {
      return {
        resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
        incomplete: false,
      };
    }
    await this.fresh();
    const rules: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false };
    for (const { rule, clusterWide } of this.grants(user, namespace || undefined)) {
      if (rule.resources?.length) {
        const listed: ResourceRule = {
          verbs: [...rule.verbs],
          apiGroups: [...(rule.apiGroups ?? [])],
          resources: [...rule.resources],
        };
        if (rule.resourceNames?.length) listed.resourceNames = [...rule.resourceNames];
        rules.resourceRules.push(listed);
      }
      if (rule.nonResourceURLs?.length && clusterWide) {
        rules.nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs] });
      }
    }
    return rules;
  }

  /** The rules bound to `user`: cluster-wide ones, and those of RoleBindings in `namespace`. */
  private *grants(
    user: UserInfo,
    namespace: string | undefined,
  ): Generator<{ rule: PolicyRule; clusterWide: boolean }> {
    for (const binding of this.index.bindingsFor(subjectsOf(user), namespace)) {
      for (const rule of this.index.rulesOf(binding)) yield { rule, clusterWide: !binding.namespace };
    }
  }
}
