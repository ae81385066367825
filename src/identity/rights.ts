// What a principal may do, before its key's scope narrows it:
//  - role admin: everything; role viewer: every read (get, list, watch), key material is never readable anyway;
//  - everyone: discovery, /version, selves, selfsubjectaccessreviews, logout;
//  - a user on its own things: read and edit its User (privileged fields need escalate, see access-checks.ts), its
//    access keys (the store shows only its own), its password and key list, its teams (read), direct cluster
//    endpoint tokens, and kubeconfigs of virtual cluster instances it may read;
//  - object access rules (spec.access) and ownership (spec.owner) on the object itself. Neither ever grants
//    `escalate`: changing roles, groups and the like stays with admins.

import { GROUP } from "../apis/management/v1/common.ts";
import type { AuthorizationAttributes } from "../registry/types.ts";
import type { AuthIndex } from "./auth-index.ts";
import { ADMIN_ROLE, type Principal, VIEWER_ROLE } from "./principal.ts";
import { alwaysAllowed } from "./scope.ts";

const READ = new Set(["get", "list", "watch"]);
const OWN_USER_VERBS = new Set(["get", "list", "watch", "update", "patch"]);
/** Verbs no access rule or ownership grants. */
const ADMIN_ONLY_VERBS = new Set(["escalate"]);
/** Ownership is full control of the object, but not the right to hand out rights. */
const OWNER_VERBS = new Set(["get", "list", "watch", "create", "update", "patch", "delete"]);

function ownRights(principal: Principal, request: AuthorizationAttributes): boolean {
  const user = principal.kind === "User" ? principal.name : undefined;
  switch (request.resource) {
    case "users":
      if (!user || request.name !== user) return false;
      if (!request.subresource) return OWN_USER_VERBS.has(request.verb);
      if (request.subresource === "accesskeys") return request.verb === "get";
      return request.subresource === "password" && request.verb === "create";
    case "teams":
      return (
        !request.subresource &&
        READ.has(request.verb) &&
        request.name !== undefined &&
        principal.teams.some((team) => team.name === request.name)
      );
    case "ownedaccesskeys":
      // The ownedaccesskeys store shows and changes only the caller's own keys (others' answer 404).
      return !request.subresource && principal.kind !== "Subject";
    case "directclusterendpointtokens":
      return request.verb === "create" && !request.subresource;
    default:
      return false;
  }
}

function objectRights(principal: Principal, request: AuthorizationAttributes, index: AuthIndex): boolean {
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
    if (!verbs.includes("*") && !verbs.includes(request.verb)) return false;
    if (!request.subresource) return true;
    const subresources = rule.subresources ?? [];
    return subresources.includes("*") || subresources.includes(request.subresource);
  });
}

export function hasRight(principal: Principal, request: AuthorizationAttributes, index: AuthIndex): boolean {
  if (principal.roles.has(ADMIN_ROLE)) return true;
  if (alwaysAllowed(request)) return true;
  const viewer = principal.roles.has(VIEWER_ROLE);
  if (!request.resourceRequest) return viewer && (request.verb === "get" || request.verb === "head");
  if (viewer && READ.has(request.verb)) return true;
  if (request.group !== GROUP) return false;
  if (ownRights(principal, request) || objectRights(principal, request, index)) return true;
  // A kubeconfig of an instance the caller may read is within its own rights.
  if (request.resource === "virtualclusterinstances" && request.subresource === "kubeconfig") {
    return (
      request.verb === "create" && objectRights(principal, { ...request, verb: "get", subresource: undefined }, index)
    );
  }
  return false;
}
