// Who the agent is on its host cluster, and what each identity may do (SECURITY.md explains why):
//  - its ServiceAccount `virtualcluster-platform/virtualcluster-platform-agent` may only impersonate users and
//    groups: every request the agent sends acts as someone else, so the host's RBAC decides each one;
//  - platform users, teams and key subjects are impersonated as `platform:user:<name>` (`platform:team:<team>`
//    for each team, as groups): what they may do is whatever the host's RBAC grants those names;
//  - its own work (spaces, the namespaces of the virtual clusters it runs) acts as `platform:agent`, which may
//    manage namespaces and RoleBindings, and bind only the roles spaces and virtual clusters hand out;
//  - each virtual cluster it runs acts as `platform:virtualcluster:<namespace>:<name>`, bound in its own namespace
//    to the synced kinds only.

import type { KubeObject } from "../apimachinery/types.ts";
import { RBAC_GROUP } from "../apis/rbac/v1/common.ts";

export const AGENT_NAMESPACE = "virtualcluster-platform";
export const AGENT_SERVICE_ACCOUNT = "virtualcluster-platform-agent";
export const IMPERSONATOR_ROLE = "virtualcluster-platform:agent-impersonator";
export const AGENT_ROLE = "virtualcluster-platform:agent";
export const RUNTIME_ROLE = "virtualcluster-platform:virtualcluster";
/** The agent's own identity on the host (impersonated like every other). */
export const AGENT_USER = "platform:agent";
/** The project roles a space's RoleBindings use: the host's own admin, edit and view ClusterRoles. */
export const SPACE_ROLES = ["admin", "edit", "view"] as const;
/** On what the agent makes, so it finds (and only ever deletes) its own objects. */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY_AGENT = "virtualcluster-platform-agent";

/** The host identity a virtual cluster's runtime acts as. */
export function runtimeUser(hostNamespace: string, name: string): string {
  return `platform:virtualcluster:${hostNamespace}:${name}`;
}

const labels = { [MANAGED_BY_LABEL]: MANAGED_BY_AGENT };
const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete"];

const clusterRole = (name: string, rules: unknown[]): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: "ClusterRole",
  metadata: { name, labels },
  rules,
});

const clusterRoleBinding = (name: string, role: string, subject: Record<string, string>): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: "ClusterRoleBinding",
  metadata: { name, labels },
  roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: role },
  subjects: [subject],
});

/** The ClusterRoles `virtualcluster cluster connect` creates on the host, and their bindings. */
export function agentClusterRbac(): { roles: KubeObject[]; bindings: KubeObject[] } {
  return {
    roles: [
      clusterRole(IMPERSONATOR_ROLE, [{ apiGroups: [""], resources: ["users", "groups"], verbs: ["impersonate"] }]),
      clusterRole(AGENT_ROLE, [
        { apiGroups: [""], resources: ["namespaces"], verbs: [...READ, ...WRITE] },
        { apiGroups: [RBAC_GROUP], resources: ["rolebindings"], verbs: [...READ, ...WRITE] },
        {
          apiGroups: [RBAC_GROUP],
          resources: ["clusterroles"],
          verbs: ["bind"],
          resourceNames: [...SPACE_ROLES, RUNTIME_ROLE],
        },
      ]),
      clusterRole(RUNTIME_ROLE, [
        { apiGroups: [""], resources: ["services", "endpoints", "configmaps", "secrets"], verbs: [...READ, ...WRITE] },
        { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
      ]),
    ],
    bindings: [
      clusterRoleBinding(IMPERSONATOR_ROLE, IMPERSONATOR_ROLE, {
        kind: "ServiceAccount",
        name: AGENT_SERVICE_ACCOUNT,
        namespace: AGENT_NAMESPACE,
      }),
      clusterRoleBinding(AGENT_ROLE, AGENT_ROLE, { apiGroup: RBAC_GROUP, kind: "User", name: AGENT_USER }),
    ],
  };
}
