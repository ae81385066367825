// The RBAC authorizer of the cluster API server: `system:masters` may do anything; everyone else is allowed what
// the (Cluster)Roles bound to them allow — ClusterRoleBindings everywhere, RoleBindings in their namespace.
// Authenticated callers are also members of `system:authenticated`, as upstream's authenticators make them.

import type { AuthorizationAttributes, AuthorizationDecision, Authorizer, UserInfo } from "../../registry/types.ts";
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
    for (const binding of this.index.bindingsFor(subjectsOf(request.user), namespace)) {
      // Non-resource URLs are granted only cluster-wide.
      if (!request.resourceRequest && binding.namespace) continue;
      for (const rule of this.index.rulesOf(binding)) if (ruleAllows(rule, request)) return ALLOWED;
    }
    return DENIED;
  }
}
