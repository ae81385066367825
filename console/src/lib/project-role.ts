// The role the signed-in user holds in a project, as the project's owner and members say it.

import type { Project } from "./kube.ts";

/** The members of a project as one line: "maria (edit), ops (view)". */
export const memberText = (project: Project) =>
  (project.spec?.members ?? []).map((m) => `${m.name} (${m.clusterRole ?? "view"})`).join(", ") || "None";

/** The role the user (with his teams) holds in the project: owner, admin, edit, view, or none. */
export function roleIn(session: { user: string; teams: string[] }, project: Project): string | undefined {
  const owner = project.spec?.owner;
  if (owner?.user === session.user || (owner?.team && session.teams.includes(owner.team))) return "owner";
  const roles = (project.spec?.members ?? [])
    .filter((m) => ((m.kind ?? "User") === "User" ? m.name === session.user : session.teams.includes(m.name)))
    .map((m) => m.clusterRole ?? "view");
  return (["admin", "edit", "view"] as const).find((role) => roles.includes(role));
}
