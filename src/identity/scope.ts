// An access key's scope, compiled into one predicate over authorization attributes. A scope only narrows: a
// request passes when any grant of the scope matches it (and the owner's own rights allow it as well).
// Projects are generic: a request belongs to project P when its namespace is `<prefix>P` (prefix from the live
// settings, default `p-`) or it names the `projects` object P, so this applies to every project resource as it lands.

import { GROUP } from "../apis/management/v1/common.ts";
import { type AccessKeyScope, roleProjectNames, SCOPE_ROLES } from "../apis/management/v1/ownedaccesskey-schema.ts";
import type { AuthorizationAttributes } from "../registry/types.ts";
import { ruleMatches } from "./scope-rules.ts";

export type ScopeMatcher = (request: AuthorizationAttributes, projectNamespacePrefix: string) => boolean;

const READ = new Set(["get", "list", "watch"]);
// create: a virtual cluster registers its own instance (external: true) on first connection.
const VC_VERBS = new Set(["get", "list", "watch", "create", "update", "patch"]);
const INSTANCES = "virtualclusterinstances";

/**
 * Non-resource URLs every caller may read (get, head): discovery, OpenAPI, /version, and the apps catalog (chart
 * names, versions and readmes of the Config's repositories: what the console's Apps page shows every user). A final
 * "*": all below.
 */
export const DISCOVERY_URLS: readonly string[] = [
  "/api",
  "/api/*",
  "/apis",
  "/apis/*",
  "/openapi/*",
  "/version",
  "/platform/apps",
  "/platform/apps/*",
];
/** The one non-resource URL every caller may post to. */
export const LOGOUT_URL = "/auth/logout";

const urlMatches = (pattern: string, path: string) =>
  pattern.endsWith("/*") ? path.startsWith(pattern.slice(0, -1)) : path === pattern;

/** What every scoped key may do: discovery, `selves`, self reviews and logging out. */
export function alwaysAllowed(request: AuthorizationAttributes): boolean {
  if (!request.resourceRequest) {
    const path = request.path ?? "";
    if (request.verb === "post") return path === LOGOUT_URL;
    if (request.verb !== "get" && request.verb !== "head") return false;
    return DISCOVERY_URLS.some((pattern) => urlMatches(pattern, path));
  }
  if (request.verb !== "create" || request.subresource) return false;
  return SELF_REVIEWS.get(request.group ?? "")?.has(request.resource ?? "") === true;
}

/** Requests that only describe the caller: whatever its role or scope, anyone may ask them. */
const SELF_REVIEWS = new Map<string, ReadonlySet<string>>([
  [GROUP, new Set(["selves", "selfsubjectaccessreviews"])],
  ["authorization.k8s.io", new Set(["selfsubjectaccessreviews", "selfsubjectrulesreviews"])],
  ["authentication.k8s.io", new Set(["selfsubjectreviews"])],
]);

/** The project a request is about, if any ("" when it lists projects). */
export function projectOf(request: AuthorizationAttributes, prefix: string): string | undefined {
  if (!request.resourceRequest) return undefined;
  if (request.namespace && prefix && request.namespace.startsWith(prefix)) {
    return request.namespace.slice(prefix.length) || undefined;
  }
  if (request.group === GROUP && request.resource === "projects" && !request.namespace) return request.name ?? "";
  return undefined;
}

/** "" (a list of projects) matches only "*". */
const inProject = (wanted: string | undefined, actual: string | undefined) =>
  actual !== undefined && (wanted === "*" || (actual !== "" && wanted === actual));

/** An object of `resource` in project `project` named `name` ("*": any, including lists). */
function namedInProject(
  request: AuthorizationAttributes,
  prefix: string,
  resource: string,
  project: string | undefined,
  name: string | undefined,
): boolean {
  if (request.group !== GROUP || request.resource !== resource) return false;
  if (!inProject(project, projectOf(request, prefix))) return false;
  return name === "*" || (request.name !== undefined && request.name === name);
}

/**
 * Role virtualcluster: registering and updating its own instance and the instance's status, handing over the
 * instance's audit events (`auditevents`, create), and the config it reads.
 * An empty list or "*" in `projects` or `virtualClusters` selects all, as everywhere in a scope.
 */
function virtualClusterRole(projects: string[], names: string[]): ScopeMatcher {
  return (request, prefix) => {
    if (request.group !== GROUP || !request.resourceRequest) return false;
    if (request.resource === "configs") return request.verb === "get" && !request.subresource;
    if (request.resource !== INSTANCES || !VC_VERBS.has(request.verb)) return false;
    const auditEvents = request.subresource === "auditevents" && request.verb === "create";
    if (request.subresource && request.subresource !== "status" && !auditEvents) return false;
    const project = projectOf(request, prefix);
    if (!project || (projects.length && !projects.includes("*") && !projects.includes(project))) return false;
    if (names.length === 0 || names.includes("*")) return true;
    return request.name !== undefined && names.includes(request.name);
  };
}

/** What a cluster's agent does on the platform: open the tunnel of its cluster (nothing else). */
export const AGENT_TUNNEL = { verb: "create", resource: "clusters", subresource: "tunnel" } as const;

/** Role agent: connecting the agent of the listed clusters ("*" or an empty list: any cluster). */
function agentRole(clusters: string[]): ScopeMatcher {
  return (request) =>
    request.resourceRequest &&
    request.group === GROUP &&
    request.resource === AGENT_TUNNEL.resource &&
    request.subresource === AGENT_TUNNEL.subresource &&
    request.verb === AGENT_TUNNEL.verb &&
    request.name !== undefined &&
    (clusters.length === 0 || clusters.includes("*") || clusters.includes(request.name));
}

/** Role platformCLI: the reads the command-line client makes, and the credentials it asks for to connect. */
const platformCliRole: ScopeMatcher = (request) => {
  if (request.group !== GROUP || !request.resourceRequest) return false;
  const resource = request.resource ?? "";
  if (request.verb === "create") {
    return (
      (resource === INSTANCES && request.subresource === "kubeconfig") ||
      (resource === "directclusterendpointtokens" && !request.subresource)
    );
  }
  if (!READ.has(request.verb)) return false;
  if (request.subresource && request.subresource !== "status") return false;
  return ["projects", INSTANCES, "spaceinstances", "clusters"].includes(resource);
};

function isEmpty(scope: AccessKeyScope): boolean {
  return (
    !scope.allowPlatformCli &&
    !scope.roles?.length &&
    !scope.projects?.length &&
    !scope.spaces?.length &&
    !scope.virtualClusters?.length &&
    !scope.clusters?.length &&
    !scope.rules?.length
  );
}

/** Undefined for no scope (or an empty one): the key has all of its owner's rights. */
export function compileScope(scope: AccessKeyScope | undefined): ScopeMatcher | undefined {
  if (!scope || isEmpty(scope)) return undefined;
  const grants: ScopeMatcher[] = [];
  for (const role of scope.roles ?? []) {
    if (role.role === SCOPE_ROLES.virtualCluster) {
      grants.push(virtualClusterRole(roleProjectNames(role.projects) ?? [], role.virtualClusters ?? []));
    } else if (role.role === SCOPE_ROLES.platformCli) {
      grants.push(platformCliRole);
    } else if (role.role === SCOPE_ROLES.agent) {
      grants.push(agentRole(role.clusters ?? []));
    }
  }
  if (scope.allowPlatformCli) grants.push(platformCliRole);
  for (const { project } of scope.projects ?? []) {
    grants.push((request, prefix) => inProject(project, projectOf(request, prefix)));
  }
  for (const { project, space } of scope.spaces ?? []) {
    grants.push((request, prefix) => namedInProject(request, prefix, "spaceinstances", project, space));
  }
  for (const { project, virtualCluster } of scope.virtualClusters ?? []) {
    grants.push((request, prefix) => namedInProject(request, prefix, INSTANCES, project, virtualCluster));
  }
  for (const { cluster } of scope.clusters ?? []) {
    grants.push(
      (request) =>
        request.resourceRequest &&
        request.group === GROUP &&
        request.resource === "clusters" &&
        (cluster === "*" || (request.name !== undefined && request.name === cluster)),
    );
  }
  for (const rule of scope.rules ?? []) grants.push((request) => ruleMatches(rule, request));
  return (request, prefix) => alwaysAllowed(request) || grants.some((grant) => grant(request, prefix));
}
