// The default RBAC objects of a cluster, created when missing (never overwritten, so an administrator's changes
// stay): cluster-admin bound to system:masters, the admin/edit/view roles for the kinds this server serves, and
// discovery and self-review for every authenticated user (kubectl needs both before anything else), under their
// upstream names `system:discovery` and `system:basic-user`.

import { isStatusError } from "../apimachinery/errors.ts";
import type { KubeObject } from "../apimachinery/types.ts";
import { type PolicyRule, RBAC_GROUP, RBAC_VERSION } from "../apis/rbac/v1/common.ts";
import type { Registry } from "../registry/registry.ts";
import { systemContext } from "../registry/system-context.ts";

const MANAGER = "rbac-bootstrap";
const LABELS = { "kubernetes.io/bootstrapping": "rbac-defaults" };
const ANNOTATIONS = { "rbac.authorization.kubernetes.io/autoupdate": "true" };
const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete", "deletecollection"];
const VIEWABLE = [
  "configmaps",
  "endpoints",
  "events",
  "namespaces",
  "namespaces/status",
  "serviceaccounts",
  "services",
  "services/status",
];
const EDITABLE = ["configmaps", "endpoints", "events", "secrets", "serviceaccounts", "services"];

const clusterRole = (name: string, rules: PolicyRule[]): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/${RBAC_VERSION}`,
  kind: "ClusterRole",
  metadata: { name, labels: LABELS, annotations: ANNOTATIONS },
  rules,
});

const groupBinding = (name: string, role: string, group: string): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/${RBAC_VERSION}`,
  kind: "ClusterRoleBinding",
  metadata: { name, labels: LABELS, annotations: ANNOTATIONS },
  roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: role },
  subjects: [{ apiGroup: RBAC_GROUP, kind: "Group", name: group }],
});

export function defaultClusterRoles(): KubeObject[] {
  const view: PolicyRule[] = [
    { apiGroups: [""], resources: VIEWABLE, verbs: READ },
    { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
  ];
  const edit: PolicyRule[] = [
    ...view,
    { apiGroups: [""], resources: ["secrets"], verbs: READ },
    { apiGroups: [""], resources: EDITABLE, verbs: WRITE },
    { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: WRITE },
  ];
  const admin: PolicyRule[] = [
    ...edit,
    { apiGroups: [RBAC_GROUP], resources: ["roles", "rolebindings"], verbs: [...READ, ...WRITE] },
  ];
  return [
    clusterRole("cluster-admin", [
      { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
      { nonResourceURLs: ["*"], verbs: ["*"] },
    ]),
    clusterRole("admin", admin),
    clusterRole("edit", edit),
    clusterRole("view", view),
    clusterRole("system:discovery", [
      {
        nonResourceURLs: [
          "/api",
          "/api/*",
          "/apis",
          "/apis/*",
          "/healthz",
          "/livez",
          "/openapi",
          "/openapi/*",
          "/readyz",
          "/version",
          "/version/",
        ],
        verbs: ["get"],
      },
    ]),
    clusterRole("system:basic-user", [
      {
        apiGroups: ["authorization.k8s.io"],
        resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
        verbs: ["create"],
      },
      { apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"], verbs: ["create"] },
    ]),
  ];
}

export function defaultClusterRoleBindings(): KubeObject[] {
  return [
    groupBinding("cluster-admin", "cluster-admin", "system:masters"),
    groupBinding("system:discovery", "system:discovery", "system:authenticated"),
    groupBinding("system:basic-user", "system:basic-user", "system:authenticated"),
  ];
}

export async function bootstrapRbac(registry: Registry): Promise<void> {
  const context = systemContext("system:apiserver", MANAGER);
  const create = async (plural: string, objects: KubeObject[]) => {
    const store = registry.genericStore(RBAC_GROUP, plural);
    if (!store) return;
    for (const object of objects) {
      try {
        await store.create(context, undefined, object, { fieldManager: MANAGER });
      } catch (error) {
        if (!(isStatusError(error) && error.reason === "AlreadyExists")) throw error;
      }
    }
  };
  await create("clusterroles", defaultClusterRoles());
  await create("clusterrolebindings", defaultClusterRoleBindings());
}
