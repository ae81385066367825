// ConfigMaps (core/v1): synced while a reference patch names them, or all of them with `all: true`; a referenced
// ConfigMap only the host has is imported into the virtual cluster.

import { cloneJson } from "../patches/json-clone.ts";
import { hostMetadata } from "./host-metadata.ts";
import { isImported } from "./kind-imported.ts";
import type { SyncedKind } from "./synced-kind.ts";
import type { WireObject } from "./types.ts";

export const configMapsKind: SyncedKind = {
  resource: "configmaps",
  kind: "ConfigMap",
  apiVersion: "v1",
  settings: "configMaps",
  enabled: (toHost, hasReferences) => toHost.configMaps.enabled && (toHost.configMaps.all || hasReferences),
  /** Translated metadata, `data`, `binaryData` and `immutable`. */
  translate(virtual, options) {
    const host: WireObject = { apiVersion: "v1", kind: "ConfigMap", metadata: hostMetadata(virtual, options) };
    for (const field of ["data", "binaryData"] as const) {
      const value = virtual[field];
      if (value && typeof value === "object" && Object.keys(value).length > 0) host[field] = cloneJson(value);
    }
    if (virtual.immutable === true) host.immutable = true;
    return host;
  },
  wanted: (virtual, view) =>
    !isImported(virtual) &&
    (view.all || view.referenced(virtual.metadata?.namespace ?? "", virtual.metadata?.name ?? "")),
  content: (object) => ({ data: object.data, binaryData: object.binaryData, immutable: object.immutable === true }),
  owner: "virtual-cluster-service",
  referenceable: true,
  confidential: false,
};
