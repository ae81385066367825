// Endpoints (core/v1): synced for a selector-less virtual Service (a Service with a selector has its Endpoints made by
// the host's own controllers), Pod targetRefs pointing at the Pods' host copies.

import { cloneJson } from "../patches/json-clone.ts";
import type { Translator } from "../translate/translator.ts";
import { hostMetadata } from "./host-metadata.ts";
import { isObject, withProtocolDefault } from "./kind-json.ts";
import { hasSelector, isKubernetesService } from "./kind-services.ts";
import type { SyncedKind } from "./synced-kind.ts";
import type { WireObject } from "./types.ts";

/** A Pod targetRef points at the Pod's host copy: translated name, host namespace, no uid or resourceVersion. */
export function translateTargetRef(address: unknown, virtualNamespace: string, translator: Translator): void {
  if (!isObject(address) || !isObject(address.targetRef)) return;
  const ref = address.targetRef;
  if (ref.kind !== "Pod") return;
  const namespace = typeof ref.namespace === "string" && ref.namespace !== "" ? ref.namespace : virtualNamespace;
  if (typeof ref.name === "string") ref.name = translator.hostName(ref.name, namespace);
  ref.namespace = translator.hostNamespace(namespace);
  delete ref.uid;
  delete ref.resourceVersion;
}

export const endpointsKind: SyncedKind = {
  resource: "endpoints",
  kind: "Endpoints",
  apiVersion: "v1",
  settings: "endpoints",
  enabled: (toHost) => toHost.endpoints.enabled,
  /** Translated metadata; subsets copied with Pod targetRefs translated, everything else unchanged. */
  translate(virtual, options) {
    const virtualNamespace = virtual.metadata?.namespace ?? "";
    const subsets = cloneJson(virtual.subsets ?? []) as unknown[];
    for (const subset of subsets) {
      if (!isObject(subset)) continue;
      for (const list of ["addresses", "notReadyAddresses"]) {
        const addresses = subset[list];
        if (!Array.isArray(addresses)) continue;
        for (const address of addresses) translateTargetRef(address, virtualNamespace, options.translator);
      }
    }
    const host: WireObject = { apiVersion: "v1", kind: "Endpoints", metadata: hostMetadata(virtual, options) };
    if (subsets.length > 0) host.subsets = subsets;
    return host;
  },
  follows: "services",
  wanted(virtual, view) {
    const { namespace = "", name = "" } = virtual.metadata ?? {};
    if (isKubernetesService(namespace, name)) return false;
    const service = view.virtual("services", namespace, name);
    // No Service: skipped. A selector: the host's endpoints controller owns the host Endpoints.
    return service !== undefined && !hasSelector(service);
  },
  content: (object) =>
    Array.isArray(object.subsets)
      ? object.subsets.map((subset) =>
          isObject(subset) ? { ...subset, ports: withProtocolDefault(subset.ports) } : subset,
        )
      : object.subsets,
  owner: "virtual-cluster-service",
  referenceable: false,
  confidential: false,
};
