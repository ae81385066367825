import { cloneJson } from "../patches/json-clone.ts";
import type { Translator } from "../translate/translator.ts";
import { type HostObjectOptions, hostMetadata } from "./host-metadata.ts";
import type { WireObject } from "./types.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A Pod targetRef points at the Pod's host copy: translated name, host namespace, no uid or resourceVersion. */
function translateTargetRef(address: unknown, virtualNamespace: string, translator: Translator): void {
  if (!isObject(address) || !isObject(address.targetRef)) return;
  const ref = address.targetRef;
  if (ref.kind !== "Pod") return;
  const namespace = typeof ref.namespace === "string" && ref.namespace !== "" ? ref.namespace : virtualNamespace;
  if (typeof ref.name === "string") ref.name = translator.hostName(ref.name, namespace);
  ref.namespace = translator.hostNamespace(namespace);
  delete ref.uid;
  delete ref.resourceVersion;
}

/**
 * The host copy of a virtual Endpoints object before patches: translated metadata, subsets copied with Pod
 * targetRefs translated. Everything else in the subsets is copied unchanged.
 */
export function translateEndpoints(virtual: WireObject, options: HostObjectOptions): WireObject {
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
  const host: WireObject = {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: hostMetadata(virtual, options),
  };
  if (subsets.length > 0) host.subsets = subsets;
  return host;
}
