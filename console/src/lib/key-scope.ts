// What an access key may reach, as the key tables show it: one label per limit of its scope.

import type { AccessKeyScope } from "./kube.ts";

const roleProjects = (projects: unknown[] | undefined) =>
  (projects ?? []).map((p) => (typeof p === "string" ? p : ((p as { project?: string }).project ?? ""))).join(", ");

/** One label per limit ("Project default", "Role virtualcluster in *"); none for a key without a scope. */
export function scopeLabels(scope: AccessKeyScope | undefined): string[] {
  if (!scope) return [];
  return [
    ...(scope.projects ?? []).map((p) => `Project ${p.project === "*" ? "(all)" : p.project}`),
    ...(scope.virtualClusters ?? []).map((v) => `Virtual cluster ${v.project}/${v.virtualCluster}`),
    ...(scope.clusters ?? []).map((c) => `Cluster ${c.cluster}`),
    ...(scope.roles ?? []).map((r) => {
      const projects = roleProjects(r.projects);
      return projects ? `Role ${r.role} in ${projects}` : `Role ${r.role}`;
    }),
  ];
}
