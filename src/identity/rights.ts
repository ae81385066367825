// What a principal may do, before its key's scope narrows it:
//  - role admin: everything; role viewer: every read (get, list, watch) but project secrets, which Kubernetes' view
//    role leaves out as it leaves Secrets out (key material is never readable anyway);
//  - everyone: discovery, /version, selves, self reviews (access, rules, subject), logout;
//  - on its own things, as each resource declares them (`authorization.ownerRights`): its User (privileged fields
//    need escalate, see access-checks.ts), its password and key list, its access keys (the store shows only its
//    own), its teams (read), direct cluster endpoint tokens; and the subresources a resource gives its readers
//    (`authorization.readerRights`: kubeconfigs of virtual cluster instances it may read);
//  - object access rules (spec.access) and ownership (spec.owner) on the object itself. Neither ever grants
//    `escalate`: changing roles, groups and the like stays with admins.

import { GROUP } from "../apis/management/v1/common.ts";
import { ownerMay } from "../registry/authorization-facts.ts";
import type { AuthorizationAttributes } from "../registry/types.ts";
import type { AuthIndex } from "./auth-index.ts";
import { ADMIN_ROLE, type Principal, VIEWER_ROLE } from "./principal.ts";
import type { FactsLookup } from "./resource-facts.ts";
import { alwaysAllowed } from "./scope.ts";

const READ = new Set(["get", "list", "watch"]);
/**
 * What the role viewer does not read: project secrets (their values, and the platform namespace's token for the
 * secret store). A viewer who is also a project's edit or admin member reads that project's through the project.
 */
const NOT_FOR_VIEWERS = new Set(["projectsecrets"]);
/** Verbs no access rule or ownership grants. */
const ADMIN_ONLY_VERBS = new Set(["escalate"]);
/** Ownership is full control of the object (using a cluster included), but not the right to hand out rights. */
const OWNER_VERBS = new Set(["get", "list", "watch", "create", "update", "patch", "delete", "use"]);

function ownRights(principal: Principal, request: AuthorizationAttributes, facts: FactsLookup): boolean {
  const rights = facts(request)?.ownerRights;
  if (!rights || !ownerMay(rights, request.verb, request.subresource)) return false;
  switch (rights.holder) {
    case "self":
      return principal.kind === "User" && request.name === principal.name;
    case "member":
      return request.name !== undefined && principal.teams.some((team) => team.name === request.name);
    case "user-or-team":
      return principal.kind !== "Subject";
    case "anyone":
      return true;
  }
}

function objectRights(
  principal: Principal,
  request: AuthorizationAttributes,
  index: AuthIndex,
  facts: FactsLookup,
): boolean {
  if (!request.name || ADMIN_ONLY_VERBS.has(request.verb)) return false;
  const entry = index.accessOf(`/${request.group}/${request.resource}/${request.namespace ?? ""}/${request.name}`);
  if (!entry) return false;
  const user = principal.kind === "User" ? principal.name : undefined;
  const inTeam = (team: string | undefined) => team !== undefined && principal.teams.some((t) => t.name === team);
  if (entry.owner && ((user && entry.owner.user === user) || inTeam(entry.owner.team))) {
    if (OWNER_VERBS.has(request.verb)) return true;
  }
  return entry.access.some((rule) => {
    const users = rule.users ?? [];
    const applies = (user && (users.includes(user) || users.includes("*"))) || (rule.teams ?? []).some(inTeam);
    if (!applies) return false;
    const verbs = rule.verbs ?? [];
    const implied = facts(request)?.impliedVerbs;
    const granted =
      verbs.includes("*") ||
      verbs.includes(request.verb) ||
      (implied !== undefined && verbs.some((verb) => implied[verb]?.includes(request.verb)));
    if (!granted) return false;
    if (!request.subresource) return true;
    const subresources = rule.subresources ?? [];
    return subresources.includes("*") || subresources.includes(request.subresource);
  });
}

export function hasRight(
  principal: Principal,
  request: AuthorizationAttributes,
  index: AuthIndex,
  facts: FactsLookup,
): boolean {
  if (principal.roles.has(ADMIN_ROLE)) return true;
  if (alwaysAllowed(request)) return true;
  const viewer = principal.roles.has(VIEWER_ROLE);
  if (!request.resourceRequest) return viewer && (request.verb === "get" || request.verb === "head");
  if (viewer && READ.has(request.verb) && !NOT_FOR_VIEWERS.has(request.resource ?? "")) return true;
  if (request.group !== GROUP) return false;
  if (ownRights(principal, request, facts) || objectRights(principal, request, index, facts)) return true;
  // Some subresources belong to whoever may read the object (a kubeconfig of an instance the caller may read).
  const readerVerbs = request.subresource ? facts(request)?.readerRights?.[request.subresource] : undefined;
  if (readerVerbs?.includes(request.verb)) {
    return objectRights(principal, { ...request, verb: "get", subresource: undefined }, index, facts);
  }
  return false;
}
