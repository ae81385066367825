// The API calls `virtualcluster create` and `delete` make on the host, and the runtime's platform connection, over
// KubeHttp under the method names of client-node's API classes (the lifecycle code and platform-rbac.ts call them
// so). Objects stay plain JSON, as those classes send and receive them on the wire; an HTTP error is a KubeApiError.

import type { CoreV1Api, DiscoveryV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import type { KubeHttp } from "../kube/kube-http.ts";

type Ref = { name: string; namespace?: string };
type Write = { namespace?: string; body: unknown };
type Listing = { namespace?: string; labelSelector?: string };

/** GET, LIST, POST, PUT and DELETE of one resource under `prefix` (/api/v1, /apis/<group>/<version>). */
function resource(http: KubeHttp, prefix: string, plural: string) {
  const path = (namespace?: string, name?: string) =>
    `${prefix}${namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`}/${plural}${
      name === undefined ? "" : `/${encodeURIComponent(name)}`
    }`;
  return {
    read: ({ name, namespace }: Ref) => http.request({ method: "GET", path: path(namespace, name) }),
    list: ({ namespace, labelSelector }: Listing) =>
      http.request({ method: "GET", path: path(namespace), query: { labelSelector } }),
    create: ({ namespace, body }: Write) => http.request({ method: "POST", path: path(namespace), body }),
    replace: ({ name, namespace, body }: Ref & Write) =>
      http.request({ method: "PUT", path: path(namespace, name), body }),
    delete: ({ name, namespace }: Ref) => http.request({ method: "DELETE", path: path(namespace, name) }),
  };
}

export type CoreCalls = Pick<
  CoreV1Api,
  | "readNamespace"
  | "createNamespace"
  | "deleteNamespace"
  | "listNamespace"
  | "readNamespacedSecret"
  | "createNamespacedSecret"
  | "replaceNamespacedSecret"
  | "deleteNamespacedSecret"
  | "listNamespacedSecret"
  | "readNamespacedService"
  | "createNamespacedService"
  | "deleteNamespacedService"
  | "listNamespacedService"
  | "readNamespacedServiceAccount"
  | "createNamespacedServiceAccount"
  | "deleteNamespacedServiceAccount"
  | "createNamespacedServiceAccountToken"
  | "listNamespacedEndpoints"
  | "deleteNamespacedEndpoints"
  | "listNamespacedConfigMap"
  | "deleteNamespacedConfigMap"
>;

export type DiscoveryCalls = Pick<DiscoveryV1Api, "listNamespacedEndpointSlice" | "deleteNamespacedEndpointSlice">;

export type RbacCalls = Pick<
  RbacAuthorizationV1Api,
  | "createNamespacedRole"
  | "readNamespacedRole"
  | "replaceNamespacedRole"
  | "deleteNamespacedRole"
  | "createNamespacedRoleBinding"
  | "readNamespacedRoleBinding"
  | "replaceNamespacedRoleBinding"
  | "deleteNamespacedRoleBinding"
  | "createClusterRole"
  | "readClusterRole"
  | "replaceClusterRole"
  | "deleteClusterRole"
  | "createClusterRoleBinding"
  | "readClusterRoleBinding"
  | "deleteClusterRoleBinding"
>;

export function coreCalls(http: KubeHttp): CoreCalls {
  const namespaces = resource(http, "/api/v1", "namespaces");
  const secrets = resource(http, "/api/v1", "secrets");
  const services = resource(http, "/api/v1", "services");
  const accounts = resource(http, "/api/v1", "serviceaccounts");
  const endpoints = resource(http, "/api/v1", "endpoints");
  const configMaps = resource(http, "/api/v1", "configmaps");
  const calls = {
    readNamespace: namespaces.read,
    createNamespace: namespaces.create,
    deleteNamespace: namespaces.delete,
    listNamespace: namespaces.list,
    readNamespacedSecret: secrets.read,
    createNamespacedSecret: secrets.create,
    replaceNamespacedSecret: secrets.replace,
    deleteNamespacedSecret: secrets.delete,
    listNamespacedSecret: secrets.list,
    readNamespacedService: services.read,
    createNamespacedService: services.create,
    deleteNamespacedService: services.delete,
    listNamespacedService: services.list,
    readNamespacedServiceAccount: accounts.read,
    createNamespacedServiceAccount: accounts.create,
    deleteNamespacedServiceAccount: accounts.delete,
    createNamespacedServiceAccountToken: ({ name, namespace, body }: Ref & Write) =>
      http.request({
        method: "POST",
        path: `/api/v1/namespaces/${encodeURIComponent(namespace ?? "")}/serviceaccounts/${encodeURIComponent(name)}/token`,
        body,
      }),
    listNamespacedEndpoints: endpoints.list,
    deleteNamespacedEndpoints: endpoints.delete,
    listNamespacedConfigMap: configMaps.list,
    deleteNamespacedConfigMap: configMaps.delete,
  };
  // Same paths and JSON as client-node's; its typed signatures (configuration overloads) are only narrowed here.
  return calls as unknown as CoreCalls;
}

export function discoveryCalls(http: KubeHttp): DiscoveryCalls {
  const slices = resource(http, "/apis/discovery.k8s.io/v1", "endpointslices");
  return {
    listNamespacedEndpointSlice: slices.list,
    deleteNamespacedEndpointSlice: slices.delete,
  } as unknown as DiscoveryCalls;
}

export function rbacCalls(http: KubeHttp): RbacCalls {
  const group = "/apis/rbac.authorization.k8s.io/v1";
  const roles = resource(http, group, "roles");
  const bindings = resource(http, group, "rolebindings");
  const clusterRoles = resource(http, group, "clusterroles");
  const clusterBindings = resource(http, group, "clusterrolebindings");
  const calls = {
    createNamespacedRole: roles.create,
    readNamespacedRole: roles.read,
    replaceNamespacedRole: roles.replace,
    deleteNamespacedRole: roles.delete,
    createNamespacedRoleBinding: bindings.create,
    readNamespacedRoleBinding: bindings.read,
    replaceNamespacedRoleBinding: bindings.replace,
    deleteNamespacedRoleBinding: bindings.delete,
    createClusterRole: clusterRoles.create,
    readClusterRole: clusterRoles.read,
    replaceClusterRole: clusterRoles.replace,
    deleteClusterRole: clusterRoles.delete,
    createClusterRoleBinding: clusterBindings.create,
    readClusterRoleBinding: clusterBindings.read,
    deleteClusterRoleBinding: clusterBindings.delete,
  };
  return calls as unknown as RbacCalls;
}
