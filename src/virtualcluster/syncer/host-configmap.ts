import { cloneJson } from "../patches/json-clone.ts";
import { type HostObjectOptions, hostMetadata } from "./host-metadata.ts";
import type { WireObject } from "./types.ts";

/** The host copy of a virtual ConfigMap before patches: translated metadata, `data`, `binaryData`, `immutable`. */
export function translateConfigMap(virtual: WireObject, options: HostObjectOptions): WireObject {
  const host: WireObject = { apiVersion: "v1", kind: "ConfigMap", metadata: hostMetadata(virtual, options) };
  for (const field of ["data", "binaryData"] as const) {
    const value = virtual[field];
    if (value && typeof value === "object" && Object.keys(value).length > 0) host[field] = cloneJson(value);
  }
  if (virtual.immutable === true) host.immutable = true;
  return host;
}
