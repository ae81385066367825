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

/** The CoreV1Api method names of a kind differ only by the kind's name: one table instead of a switch. */
const METHOD_KIND: Record<SyncedResource, string> = {
  services: "Service",
  endpoints: "Endpoints",
  secrets: "Secret",
  configmaps: "ConfigMap",
};

type Call = (request: Record<string, unknown>) => Promise<unknown>;

export function resourceCalls(core: CoreV1Api, resource: SyncedResource): ResourceCalls {
  const kind = METHOD_KIND[resource];
  const method = (name: string): Call => {
    const found = (core as unknown as Record<string, Call>)[name];
    if (typeof found !== "function") throw new TypeError(`CoreV1Api has no ${name}`);
    return found.bind(core);
  };
  const listAll = method(`list${kind}ForAllNamespaces`);
  const listIn = method(`listNamespaced${kind}`);
  const read = method(`readNamespaced${kind}`);
  const create = method(`createNamespaced${kind}`);
  const replace = method(`replaceNamespaced${kind}`);
  const patch = method(`patchNamespaced${kind}`);
  const remove = method(`deleteNamespaced${kind}`);
  return {
    list: async (namespace, selectors) =>
      list(namespace === undefined ? await listAll({ ...selectors }) : await listIn({ namespace, ...selectors })),
    read: async (namespace, name) => plain(await read({ namespace, name })),
    create: async (namespace, body) => plain(await create({ namespace, body: body as Body })),
    replace: async (namespace, name, body) => plain(await replace({ namespace, name, body: body as Body })),
    jsonPatch: async (namespace, name, operations) => plain(await patch({ namespace, name, body: operations })),
    delete: async (namespace, name, uid) => void (await remove({ namespace, name, body: preconditions(uid) })),
  };
}
