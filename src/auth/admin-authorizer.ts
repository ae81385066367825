// The authorizer of the API core: members of the admins group may do everything, nobody else anything.
// Roles, access rules and key scopes come with the access-key model.

import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from "../registry/types.ts";
import { ADMINS_GROUP } from "./bootstrap-authenticator.ts";

export class AdminAuthorizer implements Authorizer {
  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationDecision> {
    if (attributes.user.groups.includes(ADMINS_GROUP)) return { allowed: true };
    const what = attributes.resourceRequest
      ? `cannot ${attributes.verb} resource "${attributes.resource}" in API group "${attributes.group ?? ""}"`
      : `cannot ${attributes.verb} path "${attributes.path}"`;
    return { allowed: false, reason: `User "${attributes.user.name}" ${what}` };
  }
}
