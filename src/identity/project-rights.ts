// What a project grants: its owner (user, or a team the caller acts for or belongs to) is a project admin; members
// hold the role listed for them, through their user or one of their teams, the strongest one counting.
//   view:  read the project, read its instances and spaces (and their status), get kubeconfigs of the instances;
//   edit:  also create, change and delete instances and spaces (and their status), but not move an instance's access
//          point;
//   admin: also move access points (`update` on virtualclusterinstances/accesspoint, instance-writes.ts) and change
//          the project itself (its owner and allowed clusters still need makeowner / escalate).
// Project secrets (projectsecrets) are for edit and admin only, like Kubernetes' view role leaves Secrets out: they
// read and write them; their status is the platform's (the secret store sync) and no member's.
// Apps (helmreleases) are read by every member and installed, changed and removed by edit and admin; their status is
// the platform's (what the cluster's agent did) and no member's.
// A denial about a project's instances says why (not a member, or which role the caller has). Every user or team
// lists instances across namespaces, narrowed by the store to those of its projects.

import { GROUP } from "../apis/management/v1/common.ts";
import { ACCESS_POINT_SUBRESOURCE } from "../apis/management/v1/instance-writes.ts";
import { PROJECT_ROLES, type ProjectRole } from "../apis/management/v1/project-schema.ts";
import type { AuthorizationAttributes, AuthorizationDecision } from "../registry/types.ts";
import type { Principal } from "./principal.ts";
import type { ProjectEntry, ProjectIndex } from "./project-index.ts";
import { projectOf } from "./scope.ts";

/** The kinds a project holds in its namespace: members reach them by their project role. */
const INSTANCES = "virtualclusterinstances";
const SECRETS = "projectsecrets";
const APPS = "helmreleases";
const PROJECT_KINDS = new Set([INSTANCES, "spaceinstances"]);
const READ = ["get", "list", "watch"];
const LIST = ["list", "watch"];
const WRITE = ["create", "update", "patch", "delete", "deletecollection"];

function rank(role: ProjectRole): number {
  return PROJECT_ROLES.indexOf(role);
}

/** The strongest role the principal holds in the project, if any. */
export function projectRole(principal: Principal, project: ProjectEntry): ProjectRole | undefined {
  const user = principal.kind === "User" ? principal.name : undefined;
  const inTeam = (team: string | undefined) => team !== undefined && principal.teams.some((t) => t.name === team);
  if (project.owner && ((user && project.owner.user === user) || inTeam(project.owner.team))) return "admin";
  let best: ProjectRole | undefined;
  for (const member of project.members) {
    const applies = member.kind === "User" ? member.name === user : inTeam(member.name);
    if (applies && (best === undefined || rank(member.role) > rank(best))) best = member.role;
  }
  return best;
}

function instanceVerbAllowed(role: ProjectRole, request: AuthorizationAttributes): boolean {
  const { verb, subresource } = request;
  if (subresource === "kubeconfig") return verb === "create";
  if (subresource === ACCESS_POINT_SUBRESOURCE) return role === "admin" && (verb === "update" || verb === "patch");
  if (subresource && subresource !== "status") return false;
  if (READ.includes(verb)) return true;
  if (rank(role) < rank("edit")) return false;
  return subresource ? verb === "update" || verb === "patch" : WRITE.includes(verb);
}

function secretVerbAllowed(role: ProjectRole, request: AuthorizationAttributes): boolean {
  if (request.subresource || rank(role) < rank("edit")) return false;
  return READ.includes(request.verb) || WRITE.includes(request.verb);
}

function appVerbAllowed(role: ProjectRole, request: AuthorizationAttributes): boolean {
  if (request.subresource && request.subresource !== "status") return false;
  if (READ.includes(request.verb)) return true;
  return !request.subresource && rank(role) >= rank("edit") && WRITE.includes(request.verb);
}

function projectVerbAllowed(role: ProjectRole, request: AuthorizationAttributes): boolean {
  if (request.subresource && request.subresource !== "status") return false;
  if (READ.includes(request.verb)) return true;
  return role === "admin" && (request.verb === "update" || request.verb === "patch");
}

function describe(principal: Principal): string {
  if (principal.kind === "User") return `user "${principal.name}"`;
  if (principal.kind === "Team") return `team "${principal.name}"`;
  return `subject "${principal.name}"`;
}

/**
 * The project's answer for a request about one of its instances or about the project object itself; undefined when
 * the request concerns no project (the caller's other rights alone decide it).
 */
export function projectDecision(
  principal: Principal,
  request: AuthorizationAttributes,
  projects: ProjectIndex,
  prefix: string,
): AuthorizationDecision | undefined {
  if (!request.resourceRequest || request.group !== GROUP) return undefined;
  // Every user or team lists and watches instances across namespaces: the store shows it those of the projects it
  // may read (VisibleObjectsView). A namespace's list stays a question for that project.
  if (request.resource === INSTANCES && !request.namespace && LIST.includes(request.verb) && !request.subresource) {
    return principal.kind === "Subject" ? undefined : { allowed: true };
  }
  const resource = request.resource ?? "";
  if ((PROJECT_KINDS.has(resource) || resource === SECRETS || resource === APPS) && request.namespace) {
    const name = projectOf(request, prefix);
    if (!name) return undefined;
    const project = projects.project(name);
    const role = project && projectRole(principal, project);
    if (!role) return { allowed: false, reason: `${describe(principal)} is not a member of project "${name}"` };
    const allowed = resource === SECRETS ? secretVerbAllowed : resource === APPS ? appVerbAllowed : instanceVerbAllowed;
    if (allowed(role, request)) return { allowed: true };
    return {
      allowed: false,
      reason: `${describe(principal)} has the role "${role}" in project "${name}", which does not allow it`,
    };
  }
  // Projects are cluster-scoped: a namespace on the question (kubectl auth can-i sends its context's) changes nothing.
  if (request.resource === "projects" && request.name) {
    const project = projects.project(request.name);
    const role = project && projectRole(principal, project);
    if (role && projectVerbAllowed(role, request)) return { allowed: true };
  }
  return undefined;
}
