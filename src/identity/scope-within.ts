// Whether one access-key scope stays inside another: what a scoped caller may put into the scope of a credential it
// asks for (a direct cluster endpoint token). Each grant of the requested scope must be covered by a grant of the
// caller's scope, judged conservatively on the scope's own terms (deprecated rules only by an identical rule), so a
// scoped caller can never widen what it may do.

import { isDeepStrictEqual } from "node:util";
import type { FieldError } from "../apimachinery/field-errors.ts";
import { fieldError } from "../apimachinery/field-errors.ts";
import { type AccessKeyScope, roleProjectNames, SCOPE_ROLES } from "../apis/management/v1/ownedaccesskey-schema.ts";

const NOT_WITHIN = "exceeds the scope of the caller's access key";

/** Whether `granted` (a name or "*") covers `wanted`; an unset name matches nothing, so it is covered. */
const covers = (granted: string | undefined, wanted: string | undefined) =>
  wanted === undefined || granted === "*" || (granted !== undefined && granted === wanted);

/** A role's list: empty means all; "*" means all. */
const all = (list: readonly string[] | undefined) => !list?.length || list.includes("*");
const listCovers = (granted: readonly string[] | undefined, wanted: readonly string[] | undefined) =>
  all(granted) || (!all(wanted) && (wanted ?? []).every((item) => granted?.includes(item)));

function hasCli(scope: AccessKeyScope): boolean {
  return scope.allowPlatformCli === true || (scope.roles ?? []).some((r) => r.role === SCOPE_ROLES.platformCli);
}

function projectCovered(granted: AccessKeyScope, project: string | undefined): boolean {
  return (granted.projects ?? []).some((g) => covers(g.project, project));
}

/** Field errors (under `path`) for every part of `requested` that `granted` does not cover; empty when within. */
export function scopeExcess(requested: AccessKeyScope, granted: AccessKeyScope, path = "spec.scope"): FieldError[] {
  const errs: FieldError[] = [];
  const refuse = (field: string) => errs.push(fieldError.forbidden(`${path}.${field}`, NOT_WITHIN));
  if (requested.allowPlatformCli && !hasCli(granted)) refuse("allowPlatformCli");
  (requested.roles ?? []).forEach((role, i) => {
    if (role.role === SCOPE_ROLES.platformCli) {
      if (!hasCli(granted)) refuse(`roles[${i}]`);
    } else if (role.role === SCOPE_ROLES.virtualCluster) {
      const ok = (granted.roles ?? []).some(
        (g) =>
          g.role === SCOPE_ROLES.virtualCluster &&
          listCovers(roleProjectNames(g.projects), roleProjectNames(role.projects)) &&
          listCovers(g.virtualClusters, role.virtualClusters),
      );
      if (!ok) refuse(`roles[${i}]`);
    } else if (role.role === SCOPE_ROLES.agent) {
      const ok = (granted.roles ?? []).some(
        (g) => g.role === SCOPE_ROLES.agent && listCovers(g.clusters, role.clusters),
      );
      if (!ok) refuse(`roles[${i}]`);
    }
    // Other role names grant nothing, so they widen nothing.
  });
  (requested.projects ?? []).forEach(({ project }, i) => {
    if (!projectCovered(granted, project)) refuse(`projects[${i}]`);
  });
  (requested.spaces ?? []).forEach(({ project, space }, i) => {
    const ok =
      projectCovered(granted, project) ||
      (granted.spaces ?? []).some((g) => covers(g.project, project) && covers(g.space, space));
    if (!ok) refuse(`spaces[${i}]`);
  });
  (requested.virtualClusters ?? []).forEach(({ project, virtualCluster }, i) => {
    const ok =
      projectCovered(granted, project) ||
      (granted.virtualClusters ?? []).some(
        (g) => covers(g.project, project) && covers(g.virtualCluster, virtualCluster),
      );
    if (!ok) refuse(`virtualClusters[${i}]`);
  });
  (requested.clusters ?? []).forEach(({ cluster }, i) => {
    if (!(granted.clusters ?? []).some((g) => covers(g.cluster, cluster))) refuse(`clusters[${i}]`);
  });
  (requested.rules ?? []).forEach((rule, i) => {
    if (!(granted.rules ?? []).some((g) => isDeepStrictEqual(g, rule))) refuse(`rules[${i}]`);
  });
  return errs;
}
