import type { KubeHttp } from "../kube/kube-http.ts";
import type { SyncedResource, WireObject } from "./types.ts";

/** One JSON patch operation (RFC 6902). */
export interface JsonPatchOperation {
  op: "add" | "replace" | "remove" | "test";
  path: string;
  value?: unknown;
}

/** A list answer: its items and the resourceVersion to watch from. */
export interface WireList {
  metadata?: { resourceVersion?: string; continue?: string };
  items: WireObject[];
}

/** The calls the syncer makes for one resource, with plain JSON in and out. */
export interface ResourceCalls {
  list(namespace: string | undefined, selectors: { labelSelector?: string; fieldSelector?: string }): Promise<WireList>;
  read(namespace: string, name: string): Promise<WireObject>;
  create(namespace: string, body: WireObject): Promise<WireObject>;
  replace(namespace: string, name: string, body: WireObject): Promise<WireObject>;
  jsonPatch(namespace: string, name: string, operations: JsonPatchOperation[]): Promise<WireObject>;
  /** Deletes with a uid precondition, so an object recreated meanwhile is left alone. */
  delete(namespace: string, name: string, uid: string | undefined): Promise<void>;
}

/** The collection path of a core/v1 resource, in one namespace or (namespace undefined) across all of them. */
export function collectionPath(resource: string, namespace: string | undefined): string {
  return namespace === undefined
    ? `/api/v1/${resource}`
    : `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`;
}

export function resourceCalls(http: KubeHttp, resource: SyncedResource): ResourceCalls {
  const item = (namespace: string, name: string) =>
    `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}`;
  return {
    list: (namespace, selectors) =>
      http.request<WireList>({ method: "GET", path: collectionPath(resource, namespace), query: selectors }),
    read: (namespace, name) => http.request<WireObject>({ method: "GET", path: item(namespace, name) }),
    create: (namespace, body) =>
      http.request<WireObject>({ method: "POST", path: collectionPath(resource, namespace), body }),
    replace: (namespace, name, body) => http.request<WireObject>({ method: "PUT", path: item(namespace, name), body }),
    jsonPatch: (namespace, name, operations) =>
      http.request<WireObject>({
        method: "PATCH",
        path: item(namespace, name),
        body: operations,
        contentType: "application/json-patch+json",
      }),
    delete: async (namespace, name, uid) => {
      await http.request({
        method: "DELETE",
        path: item(namespace, name),
        body: { apiVersion: "v1", kind: "DeleteOptions", ...(uid ? { preconditions: { uid } } : {}) },
      });
    },
  };
}
