// The answer of `selves`: the caller, or another credential given in spec.accessKey (an access key or a direct
// cluster endpoint token), as its principal sees it.
// Token review for virtual clusters is this, not a separate `tokenreviews` resource: the virtual cluster already
// talks to `selves` (it validates its own key there), the answer already has the shape it needs (user, groups, teams,
// accessKeyScope), and one endpoint keeps one set of rules. Describing ANOTHER credential is a review: only callers
// whose key carries the role `virtualcluster`, and platform admins, may do it (403 otherwise), so a leaked key cannot
// be tested by just anyone and user keys cannot be used to probe others.

import { errors, isStatusError } from "../apimachinery/errors.ts";
import { GROUP } from "../apis/management/v1/common.ts";
import { SCOPE_ROLES } from "../apis/management/v1/ownedaccesskey-schema.ts";
import type { DescribeCaller, SelfStatus } from "../apis/management/v1/self.ts";
import type { UserInfo } from "../registry/types.ts";
import type { TeamEntry } from "./auth-index.ts";
import { type KeyLimits, keyExpiresAt } from "./key-validity.ts";
import { ADMIN_ROLE, isSystem, principalOf } from "./principal.ts";
import { isRuntimeKey } from "./runtime-binding.ts";

export interface DescribeCallerOptions {
  /** Authenticates an access key (without recording activity) or a direct cluster endpoint token. */
  authenticate(credential: string): Promise<UserInfo>;
  settings(): { platformHost: string; projectNamespacePrefix: string; instanceHeartbeatSeconds?: number };
  /** The key lifetime limits in force (for the credential's expiration). */
  limits(): KeyLimits;
}

const team = (entry: TeamEntry) => ({ name: entry.name, username: entry.username, displayName: entry.displayName });

/** Platform admins, the platform itself, and keys (or tokens) with the role `virtualcluster`. */
export function mayReviewCredentials(user: UserInfo): boolean {
  if (isSystem(user)) return true;
  const principal = principalOf(user);
  if (!principal) return false;
  if (principal.roles.has(ADMIN_ROLE)) return true;
  // Virtual clusters and connected clusters' agents check the credentials their users bring.
  return isRuntimeKey(principal) || (principal.key.scope?.roles ?? []).some((role) => role.role === SCOPE_ROLES.agent);
}

export function describeCaller(options: DescribeCallerOptions): DescribeCaller {
  return async (context, accessKey) => {
    let user = context.user;
    if (accessKey !== undefined) {
      if (!mayReviewCredentials(context.user)) {
        throw errors.forbidden(
          { group: GROUP, resource: "selves" },
          "",
          `User "${context.user.name}" cannot describe another credential (spec.accessKey): only access keys with the role "virtualcluster" and platform admins may`,
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
