import type { KubeObject } from "../../apimachinery/types.ts";

/**
 * A Kubernetes object as the syncer reads it from either cluster: the shared KubeObject, except that list items arrive
 * without apiVersion and kind, so the envelope's fields are optional.
 */
export type WireObject = Partial<KubeObject>;

/** The kinds the syncer moves to the host. `resource` is the REST plural, also the first part of a queue key. */
export type SyncedResource = "services" | "endpoints" | "secrets" | "configmaps";

export const KIND_OF: Readonly<Record<SyncedResource, string>> = {
  services: "Service",
  endpoints: "Endpoints",
  secrets: "Secret",
  configmaps: "ConfigMap",
};

/** The synced resource of a reference patch's apiVersion and kind, if the syncer syncs that kind. */
export function resourceOfKind(apiVersion: string, kind: string): SyncedResource | undefined {
  if (apiVersion !== "v1" && apiVersion !== "") return undefined;
  return (Object.keys(KIND_OF) as SyncedResource[]).find((resource) => KIND_OF[resource] === kind);
}
