import type { KubeHttp, KubeRequest } from "../kube/kube-http.ts";
import { withoutManagedFields } from "./managed-fields.ts";
import { collectionPath, type SyncedKind } from "./synced-kind.ts";
import type { WireObject } from "./types.ts";

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

/** The calls the syncer makes for one kind, with plain JSON in and out. */
export interface ResourceCalls {
  read(namespace: string, name: string): Promise<WireObject>;
  create(namespace: string, body: WireObject): Promise<WireObject>;
  replace(namespace: string, name: string, body: WireObject): Promise<WireObject>;
  replaceStatus(namespace: string, name: string, body: WireObject): Promise<WireObject>;
  jsonPatch(namespace: string, name: string, operations: JsonPatchOperation[]): Promise<WireObject>;
  /** Deletes with a uid precondition, so an object recreated meanwhile is left alone. */
  delete(namespace: string, name: string, uid: string | undefined): Promise<void>;
}

export function resourceCalls(http: KubeHttp, kind: Pick<SyncedKind, "apiVersion" | "resource">): ResourceCalls {
  const collection = (namespace: string) => collectionPath(kind, namespace);
  const item = (namespace: string, name: string) => `${collection(namespace)}/${encodeURIComponent(name)}`;
  const send = async (request: KubeRequest) => withoutManagedFields(await http.request<WireObject>(request));
  return {
    read: (namespace, name) => send({ method: "GET", path: item(namespace, name) }),
    create: (namespace, body) => send({ method: "POST", path: collection(namespace), body }),
    replace: (namespace, name, body) => send({ method: "PUT", path: item(namespace, name), body }),
    replaceStatus: (namespace, name, body) => send({ method: "PUT", path: `${item(namespace, name)}/status`, body }),
    jsonPatch: (namespace, name, operations) =>
      send({
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
