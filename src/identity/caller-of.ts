// The one place a credential's owner becomes the request's caller: the Principal (user or team with its teams and
// cluster roles, or a bare subject) and the frozen UserInfo bound to it. Access keys and platform tokens both end
// here, so a user authenticated either way has the same name, groups and rights.

import type { UserInfo } from "../registry/types.ts";
import type { AuthIndex, KeyEntry, TeamEntry, UserEntry } from "./auth-index.ts";
import { bindPrincipal, type Principal } from "./principal.ts";
import type { ScopeMatcher } from "./scope.ts";

export interface CallerOptions {
  index: AuthIndex;
  /** The credential: a stored key, or the entry a token stands for. */
  key: KeyEntry;
  scope?: ScopeMatcher;
  /** The owner: exactly one of user and team, or neither for a key with only a subject. */
  user?: UserEntry;
  team?: TeamEntry;
  /** The caller's name when it is neither a user nor a team (default: the key's subject, or the key's name). */
  subject?: string;
  /** Groups the credential itself adds (an access key's `groups`). */
  groups?: readonly string[];
  /** UserInfo.extra: which credential this is. */
  extra: Record<string, string[]>;
}

const unique = (values: Iterable<string>) => [...new Set(values)];
/** "system:" groups belong to the platform itself; no user, team or key may claim one. */
const notSystem = (group: string) => !group.startsWith("system:");
const rolesOf = (teams: readonly TeamEntry[], own: readonly string[]) =>
  new Set([...own, ...teams.flatMap((t) => t.clusterRoles)]);

/** Builds the caller; the UserInfo is frozen and `principalOf(user)` finds the Principal. */
export function callerOf(o: CallerOptions): UserInfo {
  const extraGroups = o.groups ?? [];
  let principal: Principal;
  let groups: string[];
  if (o.user) {
    const memberOf = unique([...o.user.groups, ...extraGroups]).filter(notSystem);
    const teams = o.index.teamsOf(o.user.name, memberOf);
    principal = {
      kind: "User",
      name: o.user.name,
      uid: o.user.uid,
      user: o.user,
      teams,
      roles: rolesOf(teams, o.user.clusterRoles),
      key: o.key,
      scope: o.scope,
    };
    groups = unique([...memberOf, ...teams.map((t) => t.name)]);
  } else if (o.team) {
    principal = {
      kind: "Team",
      name: o.team.name,
      uid: o.team.uid,
      team: o.team,
      teams: [o.team],
      roles: rolesOf([o.team], []),
      key: o.key,
      scope: o.scope,
    };
    groups = unique([...extraGroups, o.team.name]);
  } else {
    principal = {
      kind: "Subject",
      name: o.subject ?? o.key.subject ?? o.key.name,
      teams: [],
      roles: new Set(),
      key: o.key,
      scope: o.scope,
    };
    groups = [...extraGroups];
  }
  const user: UserInfo = Object.freeze({
    name: principal.kind === "Team" ? `team:${principal.name}` : principal.name,
    uid: principal.uid,
    groups: Object.freeze([...groups.filter(notSystem), "system:authenticated"]) as string[],
    extra: o.extra,
  });
  bindPrincipal(user, principal);
  return user;
}
