// The host calls of the platform connection (the key Secret, the Secret-reader Role and RoleBinding) over KubeHttp,
// in the shape of client-node's API classes that `virtualcluster create` passes to the same functions.

import type { KubeHttp } from "../kube/kube-http.ts";
import type { SecretReader } from "./api-key-lookup.ts";
import type { RoleApi } from "./platform-rbac.ts";

type Named = { name: string; namespace: string };
type Written = { namespace: string; body: { metadata?: { name?: string } } };

export function hostApi(http: KubeHttp): { core: SecretReader; rbac: RoleApi } {
  const path = (namespace: string, plural: string, name?: string) =>
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/${plural}${
      name === undefined ? "" : `/${encodeURIComponent(name)}`
    }`;
  const calls = (plural: string) => ({
    create: ({ namespace, body }: Written) => http.request({ method: "POST", path: path(namespace, plural), body }),
    read: ({ name, namespace }: Named) => http.request({ method: "GET", path: path(namespace, plural, name) }),
    replace: ({ name, namespace, body }: Named & Written) =>
      http.request({ method: "PUT", path: path(namespace, plural, name), body }),
  });
  const roles = calls("roles");
  const bindings = calls("rolebindings");
  const rbac = {
    createNamespacedRole: roles.create,
    readNamespacedRole: roles.read,
    replaceNamespacedRole: roles.replace,
    createNamespacedRoleBinding: bindings.create,
    readNamespacedRoleBinding: bindings.read,
    replaceNamespacedRoleBinding: bindings.replace,
  };
  return {
    core: {
      readNamespacedSecret: ({ name, namespace }) =>
        http.request({
          method: "GET",
          path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
        }),
    },
    // Same calls and JSON as client-node's; its typed signatures (configuration overloads) are only narrowed here.
    rbac: rbac as unknown as RoleApi,
  };
}
