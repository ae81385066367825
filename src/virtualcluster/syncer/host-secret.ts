import { cloneJson } from "../patches/json-clone.ts";
import { type LabelMap, putLabel } from "../translate/labels.ts";
import { type HostObjectOptions, hostMetadata } from "./host-metadata.ts";
import type { WireObject } from "./types.ts";

/**
 * The host copy of a virtual Secret before patches: translated metadata, `type`, `data` and `immutable` copied.
 * `stringData` is folded into `data` (base64) as the API server would, so the copy compares equal to what the host
 * stores.
 */
export function translateSecret(virtual: WireObject, options: HostObjectOptions): WireObject {
  const host: WireObject = { apiVersion: "v1", kind: "Secret", metadata: hostMetadata(virtual, options) };
  const data = (cloneJson(virtual.data ?? {}) ?? {}) as LabelMap;
  for (const [key, value] of Object.entries((virtual.stringData ?? {}) as LabelMap)) {
    putLabel(data, key, Buffer.from(String(value), "utf8").toString("base64"));
  }
  if (Object.keys(data).length > 0) host.data = data;
  host.type = typeof virtual.type === "string" && virtual.type !== "" ? virtual.type : "Opaque";
  if (virtual.immutable === true) host.immutable = true;
  return host;
}
