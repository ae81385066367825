// The caller behind a request, as authentication resolved it: user or team, teams, cluster roles, the access key and
// its compiled scope. Bound to the request's UserInfo object, so the authorizer and strategies find it from
// `context.user` without another lookup. UserInfo carries only names; nothing secret lives here.

import type { UserInfo } from "../registry/types.ts";
import type { KeyEntry, TeamEntry, UserEntry } from "./auth-index.ts";
import type { ScopeMatcher } from "./scope.ts";

export interface Principal {
  kind: "User" | "Team" | "Subject";
  /** User or team object name, or the key's subject. */
  name: string;
  uid?: string;
  user?: UserEntry;
  team?: TeamEntry;
  /** Teams whose rights the caller has: a user's teams, or the key's own team. */
  teams: TeamEntry[];
  /** Cluster roles of the user and its teams (or of the team). */
  roles: ReadonlySet<string>;
  key: KeyEntry;
  /** Undefined when the key has no scope. */
  scope?: ScopeMatcher;
}

/** Built-in cluster roles. */
export const ADMIN_ROLE = "admin";
export const VIEWER_ROLE = "viewer";
/** The platform's own work (systemContext in the registry) runs with this group and no principal. */
export const SYSTEM_GROUP = "system:masters";

const principals = new WeakMap<UserInfo, Principal>();

export function bindPrincipal(user: UserInfo, principal: Principal): void {
  principals.set(user, principal);
}

export function principalOf(user: UserInfo): Principal | undefined {
  return principals.get(user);
}

/**
 * Whether `after` is the caller `before` was, with the same rights: the same user or team, key, scope, teams, roles
 * and groups. Two resolutions of one credential differ once a team, role or the key's scope changed.
 */
export function sameCaller(before: UserInfo, after: UserInfo): boolean {
  if (before === after) return true;
  return callerFingerprint(before) === callerFingerprint(after);
}

function callerFingerprint(user: UserInfo): string {
  const principal = principals.get(user);
  return JSON.stringify([
    user.name,
    user.uid ?? "",
    [...user.groups].sort(),
    user.extra ?? {},
    principal && [
      principal.kind,
      principal.key.name,
      principal.key.uid,
      principal.key.scope ?? null,
      principal.teams.map((team) => `${team.name}/${team.uid}`).sort(),
      [...principal.roles].sort(),
    ],
  ]);
}

/** The platform itself: no access key behind it. Groups from keys and users never carry "system:" names. */
export function isSystem(user: UserInfo): boolean {
  return !principals.has(user) && user.groups.includes(SYSTEM_GROUP);
}

/**
 * Callers exempt from flow control and let in on the connection reserve (src/http/flow-control/): the platform
 * itself and admins whose key has no scope. A scoped key, even an admin's, queues like everyone else.
 */
export function isPrivileged(user: UserInfo): boolean {
  if (isSystem(user)) return true;
  const principal = principals.get(user);
  return principal !== undefined && !principal.scope && principal.roles.has(ADMIN_ROLE);
}
