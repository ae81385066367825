// How platform identities appear on a connected cluster: the agent impersonates them, and spaces bind them. The
// prefixes keep them apart from the host's own users and groups (as kube-apiserver's OIDC username prefix does);
// platform user and team names never contain ":", so no platform name can become another prefix's or a host
// system name (system:masters and the like).

export const HOST_USER_PREFIX = "platform:user:";
export const HOST_TEAM_PREFIX = "platform:team:";
export const HOST_SUBJECT_PREFIX = "platform:subject:";

/** The host user a platform user, team or key subject is impersonated as. */
export function hostUserName(kind: "User" | "Team" | "Subject", name: string): string {
  if (kind === "Team") return `${HOST_TEAM_PREFIX}${name}`;
  return `${kind === "User" ? HOST_USER_PREFIX : HOST_SUBJECT_PREFIX}${name}`;
}

/** The host group of a platform team. */
export function hostGroupName(team: string): string {
  return `${HOST_TEAM_PREFIX}${team}`;
}
