import type { KubeObject } from "../../apimachinery/types.ts";

/**
 * A Kubernetes object as the syncer reads it from either cluster: the shared KubeObject, except that list items arrive
 * without apiVersion and kind, so the envelope's fields are optional.
 */
export type WireObject = Partial<KubeObject>;

/**
 * The kinds the syncer moves to the host, by REST plural (also the first part of a queue key). Each is one
 * declaration in `kind-<plural>.ts`, listed in synced-kinds.ts.
 */
export type SyncedResource = "services" | "endpoints" | "endpointslices" | "configmaps" | "secrets";
