import { cloneJson } from "../patches/json-clone.ts";
import { type HostObjectOptions, hostMetadata } from "./host-metadata.ts";
import type { WireObject } from "./types.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** True when a Service selects Pods itself; its Endpoints then belong to the host's own endpoints controller. */
export function hasSelector(service: WireObject | undefined): boolean {
  const spec = service?.spec;
  return isObject(spec) && isObject(spec.selector) && Object.keys(spec.selector).length > 0;
}

/** True for a headless Service (`clusterIP: None`), the one cluster IP the host must keep. */
const isHeadless = (spec: Json): boolean => spec.clusterIP === "None";

/**
 * The host copy of a virtual Service before patches. The host allocates its own cluster IPs and node ports, so
 * those are dropped (a headless Service stays headless); the selector is translated like labels, so it selects
 * only Pods synced from the same virtual namespace; status is the host's.
 */
export function translateService(virtual: WireObject, options: HostObjectOptions): WireObject {
  const spec = isObject(virtual.spec) ? (cloneJson(virtual.spec) as Json) : {};
  if (isHeadless(spec)) {
    spec.clusterIPs = ["None"];
  } else {
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  delete spec.healthCheckNodePort;
  if (Array.isArray(spec.ports)) {
    for (const port of spec.ports) if (isObject(port)) delete port.nodePort;
  }
  if (hasSelector(virtual)) {
    spec.selector = options.translator.hostSelector(spec.selector, virtual.metadata?.namespace ?? "");
  } else {
    delete spec.selector;
  }
  return { apiVersion: "v1", kind: "Service", metadata: hostMetadata(virtual, options), spec };
}
