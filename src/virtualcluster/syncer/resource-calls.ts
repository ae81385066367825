import type { CoreV1Api, KubernetesListObject, KubernetesObject } from "@kubernetes/client-node";
import { cloneJson } from "../patches/json-clone.ts";
import type { SyncedResource, WireObject } from "./types.ts";

/** One JSON patch operation (RFC 6902): the default patch type of client-node's patch calls. */
export interface JsonPatchOperation {
  op: "add" | "replace" | "remove" | "test";
  path: string;
  value?: unknown;
}

/** The calls the syncer makes for one resource, with plain JSON in and out. */
export interface ResourceCalls {
  list(
    namespace: string | undefined,
    selectors: { labelSelector?: string; fieldSelector?: string },
  ): Promise<KubernetesListObject<KubernetesObject>>;
  read(namespace: string, name: string): Promise<WireObject>;
  create(namespace: string, body: WireObject): Promise<WireObject>;
  replace(namespace: string, name: string, body: WireObject): Promise<WireObject>;
  jsonPatch(namespace: string, name: string, operations: JsonPatchOperation[]): Promise<WireObject>;
  /** Deletes with a uid precondition, so an object recreated meanwhile is left alone. */
  delete(namespace: string, name: string, uid: string | undefined): Promise<void>;
}

// client-node's typed models are structurally plain objects with Date fields; cloneJson turns them into JSON.
type Body = never;
const plain = (object: unknown): WireObject => cloneJson(object) as WireObject;
const preconditions = (uid: string | undefined) => (uid ? { preconditions: { uid } } : {});
const list = (result: unknown) => result as KubernetesListObject<KubernetesObject>;

export function resourceCalls(core: CoreV1Api, resource: SyncedResource): ResourceCalls {
  switch (resource) {
    case "services":
      return {
        list: async (namespace, selectors) =>
          list(
            namespace === undefined
              ? await core.listServiceForAllNamespaces(selectors)
              : await core.listNamespacedService({ namespace, ...selectors }),
          ),
        read: async (namespace, name) => plain(await core.readNamespacedService({ namespace, name })),
        create: async (namespace, body) => plain(await core.createNamespacedService({ namespace, body: body as Body })),
        replace: async (namespace, name, body) =>
          plain(await core.replaceNamespacedService({ namespace, name, body: body as Body })),
        jsonPatch: async (namespace, name, operations) =>
          plain(await core.patchNamespacedService({ namespace, name, body: operations })),
        delete: async (namespace, name, uid) =>
          void (await core.deleteNamespacedService({ namespace, name, body: preconditions(uid) })),
      };
    case "endpoints":
      return {
        list: async (namespace, selectors) =>
          list(
            namespace === undefined
              ? await core.listEndpointsForAllNamespaces(selectors)
              : await core.listNamespacedEndpoints({ namespace, ...selectors }),
          ),
        read: async (namespace, name) => plain(await core.readNamespacedEndpoints({ namespace, name })),
        create: async (namespace, body) =>
          plain(await core.createNamespacedEndpoints({ namespace, body: body as Body })),
        replace: async (namespace, name, body) =>
          plain(await core.replaceNamespacedEndpoints({ namespace, name, body: body as Body })),
        jsonPatch: async (namespace, name, operations) =>
          plain(await core.patchNamespacedEndpoints({ namespace, name, body: operations })),
        delete: async (namespace, name, uid) =>
          void (await core.deleteNamespacedEndpoints({ namespace, name, body: preconditions(uid) })),
      };
    case "secrets":
      return {
        list: async (namespace, selectors) =>
          list(
            namespace === undefined
              ? await core.listSecretForAllNamespaces(selectors)
              : await core.listNamespacedSecret({ namespace, ...selectors }),
          ),
        read: async (namespace, name) => plain(await core.readNamespacedSecret({ namespace, name })),
        create: async (namespace, body) => plain(await core.createNamespacedSecret({ namespace, body: body as Body })),
        replace: async (namespace, name, body) =>
          plain(await core.replaceNamespacedSecret({ namespace, name, body: body as Body })),
        jsonPatch: async (namespace, name, operations) =>
          plain(await core.patchNamespacedSecret({ namespace, name, body: operations })),
        delete: async (namespace, name, uid) =>
          void (await core.deleteNamespacedSecret({ namespace, name, body: preconditions(uid) })),
      };
  }
}
