// Secrets (core/v1): synced while a reference patch names them, or all of them with `all: true` (service account
// token Secrets never); a referenced Secret only the host has is imported. Nothing about their data is ever reported.

import { cloneJson } from "../patches/json-clone.ts";
import { type LabelMap, putLabel } from "../translate/labels.ts";
import { hostMetadata } from "./host-metadata.ts";
import { isImported } from "./kind-imported.ts";
import type { SyncedKind } from "./synced-kind.ts";
import type { WireObject } from "./types.ts";

const typeOf = (object: WireObject) => (typeof object.type === "string" && object.type !== "" ? object.type : "Opaque");

export const secretsKind: SyncedKind = {
  resource: "secrets",
  kind: "Secret",
  apiVersion: "v1",
  settings: "secrets",
  enabled: (toHost, hasReferences) => toHost.secrets.enabled && (toHost.secrets.all || hasReferences),
  /**
   * Translated metadata, `type`, `data` and `immutable`. `stringData` is folded into `data` (base64) as the API
   * server would, so the copy compares equal to what the host stores.
   */
  translate(virtual, options) {
    const host: WireObject = { apiVersion: "v1", kind: "Secret", metadata: hostMetadata(virtual, options) };
    const data = (cloneJson(virtual.data ?? {}) ?? {}) as LabelMap;
    for (const [key, value] of Object.entries((virtual.stringData ?? {}) as LabelMap)) {
      putLabel(data, key, Buffer.from(String(value), "utf8").toString("base64"));
    }
    if (Object.keys(data).length > 0) host.data = data;
    host.type = typeOf(virtual);
    if (virtual.immutable === true) host.immutable = true;
    return host;
  },
  // The virtual API server makes service account token Secrets for itself.
  wanted: (virtual, view) =>
    !isImported(virtual) &&
    virtual.type !== "kubernetes.io/service-account-token" &&
    (view.all || view.referenced(virtual.metadata?.namespace ?? "", virtual.metadata?.name ?? "")),
  content: (object) => ({ type: typeOf(object), data: object.data, immutable: object.immutable === true }),
  // A Secret's type cannot change in place.
  replaces: (desired, actual) => typeOf(desired) !== typeOf(actual),
  owner: "virtual-cluster-service",
  referenceable: true,
  confidential: true,
};
