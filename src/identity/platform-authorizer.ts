// The platform's authorizer: a request is allowed when the caller's rights allow it (rights.ts, and the projects'
// members and owners, project-rights.ts) and its access key's scope lets it through. Scoped keys never create or
// change access keys or passwords: a scope cannot be widened through the key itself; for the same reason a scoped key
// gets a kubeconfig (whose credentials reach the whole virtual cluster) only when its scope covers that instance.
// Denials carry a reason only where the verb alone does not say why.

import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from "../registry/types.ts";
import type { AuthIndex } from "./auth-index.ts";
import { isSystem, type Principal, principalOf } from "./principal.ts";
import type { ProjectIndex } from "./project-index.ts";
import { projectDecision } from "./project-rights.ts";
import { hasRight } from "./rights.ts";

const ALLOWED: AuthorizationDecision = { allowed: true };
const DENIED: AuthorizationDecision = { allowed: false };
const OUT_OF_SCOPE: AuthorizationDecision = { allowed: false, reason: "the access key's scope does not allow it" };
const SCOPED_ESCALATION: AuthorizationDecision = {
  allowed: false,
  reason: "a scoped access key cannot create or change access keys or passwords",
};

const KUBECONFIG_BEYOND_SCOPE: AuthorizationDecision = {
  allowed: false,
  reason:
    "a kubeconfig grants access to the whole virtual cluster, which the access key's scope does not cover (use a key scoped to the project or to this virtual cluster)",
};
/** What the access key of a token-form kubeconfig may do on its instance: the caller's scope must allow all of it. */
const KUBECONFIG_KEY_VERBS = ["get", "update", "patch", "delete"];

function isKubeconfig(request: AuthorizationAttributes): boolean {
  return request.resource === "virtualclusterinstances" && request.subresource === "kubeconfig";
}

function widensAccess(request: AuthorizationAttributes): boolean {
  if (!request.resourceRequest) return false;
  if (request.resource === "ownedaccesskeys") return ["create", "update", "patch"].includes(request.verb);
  return request.resource === "users" && request.subresource === "password";
}

export class PlatformAuthorizer implements Authorizer {
  private readonly index: AuthIndex;
  private readonly projectNamespacePrefix: () => string;
  private projects?: { index: ProjectIndex; fresh: () => Promise<void> };

  constructor(index: AuthIndex, projectNamespacePrefix: () => string) {
    this.index = index;
    this.projectNamespacePrefix = projectNamespacePrefix;
  }

  /** Projects grant rights to their owners and members (attached once the project index runs). */
  useProjects(index: ProjectIndex, fresh: () => Promise<void>): void {
    this.projects = { index, fresh };
  }

  async authorize(request: AuthorizationAttributes): Promise<AuthorizationDecision> {
    const decision = this.decide(request);
    if (decision.allowed || !this.projects || !this.aboutProjects(request)) return decision;
    // A project written just before may not be indexed yet: catch up, then decide again.
    await this.projects.fresh();
    return this.decide(request);
  }

  decide(request: AuthorizationAttributes): AuthorizationDecision {
    const principal = principalOf(request.user);
    if (!principal) return isSystem(request.user) ? ALLOWED : DENIED;
    const prefix = this.projectNamespacePrefix();
    if (principal.scope) {
      if (!principal.scope(request, prefix)) return OUT_OF_SCOPE;
      if (widensAccess(request)) return SCOPED_ESCALATION;
      if (isKubeconfig(request) && !this.scopeCoversInstance(principal, request, prefix))
        return KUBECONFIG_BEYOND_SCOPE;
    }
    if (hasRight(principal, request, this.index)) return ALLOWED;
    if (!this.projects) return DENIED;
    return projectDecision(principal, request, this.projects.index, prefix) ?? DENIED;
  }

  private aboutProjects(request: AuthorizationAttributes): boolean {
    return (
      principalOf(request.user) !== undefined &&
      (request.resource === "virtualclusterinstances" || request.resource === "projects")
    );
  }

  private scopeCoversInstance(principal: Principal, request: AuthorizationAttributes, prefix: string): boolean {
    const scope = principal.scope;
    if (!scope) return true;
    return KUBECONFIG_KEY_VERBS.every((verb) => scope({ ...request, verb, subresource: undefined }, prefix));
  }
}
