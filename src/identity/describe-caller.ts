// The answer of `selves`: the caller, or another credential given in spec.accessKey (an access key or a direct
// cluster endpoint token), as its principal sees it.
// Token review for virtual clusters is this, not a separate `tokenreviews` resource: the virtual cluster already
// talks to `selves` (it validates its own key there), the answer already has the shape it needs (user, groups, teams,
// accessKeyScope), and one endpoint keeps one set of rules. Describing ANOTHER credential is a review: only platform
// admins, virtual clusters' runtimes and connected clusters' agents may do it (403 otherwise), so a leaked key cannot
// be tested by just anyone and user keys cannot be used to probe others. A role in a key's scope is something its
// owner writes freely, so the role alone is not enough: the key must also do what the role is for — report for an
// instance whose runtime its owner is (spec.runtime), or connect the agent of a cluster it names.

import { errors, isStatusError } from "../apimachinery/errors.ts";
import { GROUP } from "../apis/management/v1/common.ts";
import { SCOPE_ROLES } from "../apis/management/v1/ownedaccesskey-schema.ts";
import type { DescribeCaller, SelfStatus } from "../apis/management/v1/self.ts";
import type { RuntimeOwner } from "../apis/management/v1/virtualclusterinstance-schema.ts";
import type { AuthorizationAttributes, Authorizer, UserInfo } from "../registry/types.ts";
import type { TeamEntry } from "./auth-index.ts";
import { type KeyLimits, keyExpiresAt } from "./key-validity.ts";
import { ADMIN_ROLE, isSystem, principalOf } from "./principal.ts";
import { INSTANCES, isRuntimeKey, ownerOf } from "./runtime-binding.ts";
import { AGENT_TUNNEL } from "./scope.ts";

export interface DescribeCallerOptions {
  /** Authenticates an access key (without recording activity) or a direct cluster endpoint token. */
  authenticate(credential: string): Promise<UserInfo>;
  settings(): { platformHost: string; projectNamespacePrefix: string; instanceHeartbeatSeconds?: number };
  /** The key lifetime limits in force (for the credential's expiration). */
  limits(): KeyLimits;
  /** The instances whose spec.runtime names `owner` (runtime-binding.ts instancesRunBy). */
  instancesRunBy(owner: RuntimeOwner): Iterable<{ namespace: string; name: string }>;
}

const team = (entry: TeamEntry) => ({ name: entry.name, username: entry.username, displayName: entry.displayName });

/**
 * Platform admins, the platform itself, a runtime's key that may report for an instance bound to its owner, and an
 * agent's key that may connect the agent of a cluster its role names. Asks `authorizer` as those requests would.
 */
export async function mayReviewCredentials(
  user: UserInfo,
  authorizer: Authorizer,
  instancesRunBy: DescribeCallerOptions["instancesRunBy"],
): Promise<boolean> {
  if (isSystem(user)) return true;
  const principal = principalOf(user);
  if (!principal) return false;
  if (principal.roles.has(ADMIN_ROLE)) return true;
  const allowed = async (attributes: Omit<AuthorizationAttributes, "user" | "group" | "resourceRequest">) =>
    (await authorizer.authorize({ user, group: GROUP, resourceRequest: true, ...attributes })).allowed;
  const owner = ownerOf(principal);
  if (isRuntimeKey(principal) && owner) {
    for (const { namespace, name } of instancesRunBy(owner)) {
      if (await allowed({ verb: "update", resource: INSTANCES, subresource: "status", namespace, name })) return true;
    }
  }
  for (const role of principal.key.scope?.roles ?? []) {
    if (role.role !== SCOPE_ROLES.agent) continue;
    for (const cluster of role.clusters ?? []) {
      if (cluster !== "*" && (await allowed({ ...AGENT_TUNNEL, name: cluster }))) return true;
    }
  }
  return false;
}

export function describeCaller(options: DescribeCallerOptions): DescribeCaller {
  return async (context, accessKey) => {
    let user = context.user;
    if (accessKey !== undefined) {
      if (!(await mayReviewCredentials(context.user, context.authorizer, options.instancesRunBy))) {
        throw errors.forbidden(
          { group: GROUP, resource: "selves" },
          "",
          `User "${context.user.name}" cannot describe another credential (spec.accessKey): only platform admins, the runtime keys of virtual clusters and the agent keys of connected clusters may`,
        );
      }
      try {
        user = await options.authenticate(accessKey);
      } catch (error) {
        if (isStatusError(error) && error.code === 401) throw errors.badRequest(`spec.accessKey: ${error.message}`);
        throw error;
      }
    }
    const settings = options.settings();
    const status: SelfStatus = {
      groups: [...user.groups],
      platformHost: settings.platformHost,
      projectNamespacePrefix: settings.projectNamespacePrefix,
      subject: user.name,
    };
    if (settings.instanceHeartbeatSeconds !== undefined) {
      status.instanceHeartbeatSeconds = settings.instanceHeartbeatSeconds;
    }
    const principal = principalOf(user);
    if (!principal) return status;
    status.uid = principal.uid;
    // A token has no key object: its type says what it is.
    if (principal.key.name) status.accessKey = principal.key.name;
    status.accessKeyType = principal.key.type;
    if (principal.key.scope) status.accessKeyScope = principal.key.scope;
    const expiresAt = keyExpiresAt(principal.key, options.limits());
    if (expiresAt !== undefined) status.accessKeyExpirationTimestamp = new Date(expiresAt).toISOString();
    if (principal.user) {
      const { name, username, displayName, email, subject } = principal.user;
      status.user = { name, username, displayName, email, teams: principal.teams.map(team) };
      status.subject = subject || username;
    } else if (principal.team) {
      status.team = team(principal.team);
      status.subject = principal.team.username || principal.team.name;
    }
    return status;
  };
}
