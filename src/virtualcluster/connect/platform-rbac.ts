// The host RBAC a virtual cluster needs to read a platform API key Secret kept in another namespace (the shared key
// setup): one Role allowing `get` of that one Secret, bound to the virtual cluster's ServiceAccount `vc-<name>`.
// Created only when createRBAC is on and the Secret's namespace differs from the virtual cluster's.

import type { RbacAuthorizationV1Api, V1Role, V1RoleBinding } from "@kubernetes/client-node";
import { MANAGED_BY_LABEL } from "../translate/constants.ts";

const MAX_NAME = 63;

/** Kubernetes names are at most 63 characters and may not end with `-`. */
function truncatedName(name: string): string {
  return name.slice(0, MAX_NAME).replace(/-+$/, "");
}

export function platformRoleName(virtualCluster: string, namespace: string): string {
  return truncatedName(`vc-${virtualCluster}-v-${namespace}-platform-role`);
}

export function platformRoleBindingName(virtualCluster: string, namespace: string): string {
  return truncatedName(`vc-${virtualCluster}-v-${namespace}-platform-role-binding`);
}

export function serviceAccountName(virtualCluster: string): string {
  return `vc-${virtualCluster}`;
}

export interface SecretReaderRbac {
  role: V1Role;
  binding: V1RoleBinding;
}

export interface SecretReaderTarget {
  /** The virtual cluster's name and host namespace. */
  name: string;
  namespace: string;
  secretName: string;
  secretNamespace: string;
}

/** The Role and RoleBinding of the reference, in the Secret's namespace. */
export function secretReaderRbac(target: SecretReaderTarget): SecretReaderRbac {
  const labels = { [MANAGED_BY_LABEL]: target.name };
  const roleName = platformRoleName(target.name, target.namespace);
  return {
    role: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: roleName, namespace: target.secretNamespace, labels },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: [target.secretName] }],
    },
    binding: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: {
        name: platformRoleBindingName(target.name, target.namespace),
        namespace: target.secretNamespace,
        labels,
      },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName },
      subjects: [{ kind: "ServiceAccount", name: serviceAccountName(target.name), namespace: target.namespace }],
    },
  };
}

/** Whether the settings call for the RBAC (createRBAC on and the Secret elsewhere). */
export function needsSecretReaderRbac(createRBAC: boolean, secretNamespace: string, namespace: string): boolean {
  return createRBAC && secretNamespace !== namespace;
}

const statusCode = (error: unknown) => (error as { code?: number }).code;

/** The Role and RoleBinding calls made here (client-node's RbacAuthorizationV1Api, or kube-calls.ts rbacCalls()). */
export type RoleApi = Pick<
  RbacAuthorizationV1Api,
  | "createNamespacedRole"
  | "readNamespacedRole"
  | "replaceNamespacedRole"
  | "createNamespacedRoleBinding"
  | "readNamespacedRoleBinding"
  | "replaceNamespacedRoleBinding"
>;

/** Creates the Role and RoleBinding, or replaces them when they drifted. Idempotent. */
export async function ensureSecretReaderRbac(api: RoleApi, target: SecretReaderTarget): Promise<void> {
  const { role, binding } = secretReaderRbac(target);
  const namespace = target.secretNamespace;
  try {
    await api.createNamespacedRole({ namespace, body: role });
  } catch (error) {
    if (statusCode(error) !== 409) throw error;
    const current = await api.readNamespacedRole({ name: role.metadata?.name ?? "", namespace });
    if (JSON.stringify(current.rules) !== JSON.stringify(role.rules)) {
      await api.replaceNamespacedRole({
        name: role.metadata?.name ?? "",
        namespace,
        body: { ...role, metadata: { ...role.metadata, resourceVersion: current.metadata?.resourceVersion } },
      });
    }
  }
  try {
    await api.createNamespacedRoleBinding({ namespace, body: binding });
  } catch (error) {
    if (statusCode(error) !== 409) throw error;
    // roleRef is immutable; subjects are the only thing that can drift.
    const current = await api.readNamespacedRoleBinding({ name: binding.metadata?.name ?? "", namespace });
    if (JSON.stringify(current.subjects) !== JSON.stringify(binding.subjects)) {
      await api.replaceNamespacedRoleBinding({
        name: binding.metadata?.name ?? "",
        namespace,
        body: { ...binding, metadata: { ...binding.metadata, resourceVersion: current.metadata?.resourceVersion } },
      });
    }
  }
}
