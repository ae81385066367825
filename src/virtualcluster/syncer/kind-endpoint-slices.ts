// EndpointSlices (discovery.k8s.io/v1) written in the virtual cluster by users or their controllers. The slices the
// EndpointSlice mirroring controller makes from Endpoints are never synced: each side mirrors its own Endpoints
// (the synced host Endpoints are mirrored by the host), so a client that reads only slices sees on either side what
// a client of Endpoints sees. The `kubernetes.io/service-name` label names the host Service.

import { cloneJson } from "../patches/json-clone.ts";
import { hostMetadata } from "./host-metadata.ts";
import { translateTargetRef } from "./kind-endpoints.ts";
import { isObject, withProtocolDefault } from "./kind-json.ts";
import { isKubernetesService } from "./kind-services.ts";
import type { SyncedKind } from "./synced-kind.ts";
import type { WireObject } from "./types.ts";

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
export const SLICE_MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";
export const MIRRORING_CONTROLLER = "endpointslicemirroring-controller.k8s.io";
/** Slices of this kind that are not the mirroring controller's. */
const NOT_MIRRORED = `${SLICE_MANAGED_BY_LABEL}!=${MIRRORING_CONTROLLER}`;

/** ports[].name defaults to "" and protocol to TCP on the server. */
const portDefaults = (ports: unknown): unknown =>
  Array.isArray(withProtocolDefault(ports))
    ? (withProtocolDefault(ports) as unknown[]).map((port) => (isObject(port) ? { name: "", ...port } : port))
    : ports;

export const endpointSlicesKind: SyncedKind = {
  resource: "endpointslices",
  kind: "EndpointSlice",
  apiVersion: "discovery.k8s.io/v1",
  settings: "endpointSlices",
  enabled: (toHost) => toHost.endpointSlices.enabled,
  /** Translated metadata and service-name label; endpoints with Pod targetRefs translated; ports and type copied. */
  translate(virtual, options) {
    const virtualNamespace = virtual.metadata?.namespace ?? "";
    const metadata = hostMetadata(virtual, options);
    const service = virtual.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (service !== undefined) {
      metadata.labels = {
        ...metadata.labels,
        [SERVICE_NAME_LABEL]: options.translator.hostName(service, virtualNamespace),
      };
    }
    const endpoints = cloneJson(virtual.endpoints ?? []) as unknown[];
    for (const endpoint of endpoints) translateTargetRef(endpoint, virtualNamespace, options.translator);
    const host: WireObject = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata,
      addressType: virtual.addressType,
      endpoints,
    };
    if (Array.isArray(virtual.ports)) host.ports = cloneJson(virtual.ports);
    return host;
  },
  // The `kubernetes` Service's slice describes the virtual API server itself, as its Endpoints do: never synced.
  wanted: (virtual) =>
    virtual.metadata?.labels?.[SLICE_MANAGED_BY_LABEL] !== MIRRORING_CONTROLLER &&
    !isKubernetesService(virtual.metadata?.namespace ?? "", virtual.metadata?.labels?.[SERVICE_NAME_LABEL] ?? ""),
  // The mirrored slices of both sides are left out by the servers; on the host they even carry our label (copied
  // from the synced Endpoints) and are the host's, never ours.
  virtualSelector: NOT_MIRRORED,
  hostSelector: NOT_MIRRORED,
  content: (object) => ({
    addressType: object.addressType,
    endpoints: object.endpoints ?? [],
    ports: portDefaults(object.ports) ?? [],
  }),
  owner: "virtual-cluster-service",
  referenceable: false,
  confidential: false,
};
