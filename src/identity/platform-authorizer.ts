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
import { type FactsLookup, mintedBy } from "./resource-facts.ts";
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

export interface PlatformAuthorizerOptions {
  index: AuthIndex;
  projectNamespacePrefix: () => string;
  /** The authorization facts of the served resources. */
  facts: FactsLookup;
}

export class PlatformAuthorizer implements Authorizer {
  private readonly index: AuthIndex;
  private readonly projectNamespacePrefix: () => string;
  private readonly facts: FactsLookup;
  private projects?: { index: ProjectIndex; fresh: () => Promise<void> };

  constructor(options: PlatformAuthorizerOptions) {
    this.index = options.index;
    this.projectNamespacePrefix = options.projectNamespacePrefix;
    this.facts = options.facts;
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
      // A credential nothing bounds would widen the key's own scope; one that reaches a whole object needs all of it.
      const minted = mintedBy(this.facts, request);
      if (minted?.boundedBy === false) return SCOPED_ESCALATION;
      if (minted?.boundedBy === "instance" && !this.scopeCoversInstance(principal, request, prefix))
        return KUBECONFIG_BEYOND_SCOPE;
    }
    if (hasRight(principal, request, this.index, this.facts)) return ALLOWED;
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
