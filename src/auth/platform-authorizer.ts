// The platform's authorizer: a request is allowed when the caller's rights allow it (rights.ts) and its access key's
// scope lets it through. Scoped keys never create or change access keys or passwords: a scope cannot be widened
// through the key itself. Denials carry a reason only where the verb alone does not say why.

import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from "../registry/types.ts";
import type { AuthIndex } from "./auth-index.ts";
import { isSystem, principalOf } from "./principal.ts";
import { hasRight } from "./rights.ts";

const ALLOWED: AuthorizationDecision = { allowed: true };
const DENIED: AuthorizationDecision = { allowed: false };
const OUT_OF_SCOPE: AuthorizationDecision = { allowed: false, reason: "the access key's scope does not allow it" };
const SCOPED_ESCALATION: AuthorizationDecision = {
  allowed: false,
  reason: "a scoped access key cannot create or change access keys or passwords",
};

function widensAccess(request: AuthorizationAttributes): boolean {
  if (!request.resourceRequest) return false;
  if (request.resource === "ownedaccesskeys") return ["create", "update", "patch"].includes(request.verb);
  return request.resource === "users" && request.subresource === "password";
}

export class PlatformAuthorizer implements Authorizer {
  private readonly index: AuthIndex;
  private readonly projectNamespacePrefix: () => string;

  constructor(index: AuthIndex, projectNamespacePrefix: () => string) {
    this.index = index;
    this.projectNamespacePrefix = projectNamespacePrefix;
  }

  async authorize(request: AuthorizationAttributes): Promise<AuthorizationDecision> {
    return this.decide(request);
  }

  decide(request: AuthorizationAttributes): AuthorizationDecision {
    const principal = principalOf(request.user);
    if (!principal) return isSystem(request.user) ? ALLOWED : DENIED;
    if (principal.scope) {
      if (!principal.scope(request, this.projectNamespacePrefix())) return OUT_OF_SCOPE;
      if (widensAccess(request)) return SCOPED_ESCALATION;
    }
    return hasRight(principal, request, this.index) ? ALLOWED : DENIED;
  }
}
