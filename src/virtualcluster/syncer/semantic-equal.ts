import { isDeepStrictEqual } from "node:util";
import type { OwnerReference } from "../../apimachinery/types.ts";
import { cloneJson } from "../patches/json-clone.ts";
import type { SyncedResource, WireObject } from "./types.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Drops null, empty lists and empty maps, recursively: the API treats them as absent. The objects are Services,
 * Endpoints and Secrets from API servers: ours hold bodies to MAX_NESTING_DEPTH, and their schemas are shallow.
 */
function pruned(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(pruned);
    return items.length === 0 ? undefined : items;
  }
  if (!isObject(value)) return value === null ? undefined : value;
  const result: Json = {};
  for (const [key, item] of Object.entries(value)) {
    const kept = pruned(item);
    if (kept !== undefined) result[key] = kept;
  }
  return Object.keys(result).length === 0 ? undefined : result;
}

const looselyEqual = (a: unknown, b: unknown): boolean => isDeepStrictEqual(pruned(a), pruned(b));

const ownerKey = (reference: OwnerReference) => ({
  apiVersion: reference.apiVersion,
  kind: reference.kind,
  name: reference.name,
  uid: reference.uid,
  controller: reference.controller === true,
  blockOwnerDeletion: reference.blockOwnerDeletion === true,
});

/** ports[].protocol defaults to TCP on the server. */
function withPortDefaults(ports: unknown, service: boolean): unknown {
  if (!Array.isArray(ports)) return ports;
  return ports.map((port) => {
    if (!isObject(port)) return port;
    const result: Json = { ...port, protocol: port.protocol ?? "TCP" };
    if (service) {
      result.targetPort = port.targetPort ?? port.port;
      delete result.nodePort; // allocated by the host
    }
    return result;
  });
}

function normalizedSubsets(subsets: unknown): unknown {
  if (!Array.isArray(subsets)) return subsets;
  return subsets.map((subset) =>
    isObject(subset) ? { ...subset, ports: withPortDefaults(subset.ports, false) } : subset,
  );
}

/** Fields the host allocates or defaults, removed or filled in on both sides before comparing. */
const ALLOCATED_SERVICE_FIELDS = [
  "clusterIP",
  "clusterIPs",
  "ipFamilies",
  "ipFamilyPolicy",
  "healthCheckNodePort",
  "allocateLoadBalancerNodePorts",
];

function normalizedServiceSpec(value: unknown): unknown {
  if (!isObject(value)) return value;
  const spec = cloneJson(value) as Json;
  const headless = spec.clusterIP === "None";
  for (const field of ALLOCATED_SERVICE_FIELDS) delete spec[field];
  if (headless) spec.clusterIP = "None";
  spec.type ??= "ClusterIP";
  spec.sessionAffinity ??= "None";
  if (spec.sessionAffinity === "ClientIP") {
    const config = isObject(spec.sessionAffinityConfig) ? spec.sessionAffinityConfig : {};
    const clientIP = isObject(config.clientIP) ? config.clientIP : {};
    spec.sessionAffinityConfig = { ...config, clientIP: { timeoutSeconds: 10800, ...clientIP } };
  }
  if (spec.type !== "ExternalName") spec.internalTrafficPolicy ??= "Cluster";
  if (spec.type === "NodePort" || spec.type === "LoadBalancer") spec.externalTrafficPolicy ??= "Cluster";
  spec.ports = withPortDefaults(spec.ports, true);
  return spec;
}

const BODY: Record<SyncedResource, (object: WireObject) => unknown> = {
  endpoints: (object) => normalizedSubsets(object.subsets),
  services: (object) => normalizedServiceSpec(object.spec),
  secrets: (object) => ({ type: object.type || "Opaque", data: object.data, immutable: object.immutable === true }),
  configmaps: (object) => ({ data: object.data, binaryData: object.binaryData, immutable: object.immutable === true }),
};

/**
 * True when the host object `actual` already is in the state `desired` describes: same labels, annotations and
 * owner references, and the same content, with fields the server sets or defaults (resourceVersion, timestamps,
 * cluster IPs, node ports, default protocols...) ignored. The syncer writes only when this is false.
 */
export function semanticallyEqual(resource: SyncedResource, desired: WireObject, actual: WireObject): boolean {
  const d = desired.metadata ?? {};
  const a = actual.metadata ?? {};
  if (!looselyEqual(d.labels, a.labels) || !looselyEqual(d.annotations, a.annotations)) return false;
  if (!looselyEqual((d.ownerReferences ?? []).map(ownerKey), (a.ownerReferences ?? []).map(ownerKey))) return false;
  return looselyEqual(BODY[resource](desired), BODY[resource](actual));
}

/**
 * The body of an update: the desired object with the actual object's resourceVersion, and the values the host
 * allocated for a Service (cluster IPs, node ports) kept, since they cannot change on update.
 */
export function updateBody(resource: SyncedResource, desired: WireObject, actual: WireObject): WireObject {
  const body = cloneJson(desired) as WireObject;
  body.metadata = { ...body.metadata, resourceVersion: actual.metadata?.resourceVersion };
  if (resource !== "services" || !isObject(body.spec) || !isObject(actual.spec)) return body;
  const spec = body.spec;
  const old = actual.spec;
  for (const field of ALLOCATED_SERVICE_FIELDS) {
    if (spec[field] === undefined && old[field] !== undefined) spec[field] = old[field];
  }
  if (Array.isArray(spec.ports) && Array.isArray(old.ports)) {
    for (const port of spec.ports) {
      if (!isObject(port) || port.nodePort !== undefined) continue;
      const match = old.ports.find(
        (o) => isObject(o) && o.port === port.port && (o.protocol ?? "TCP") === (port.protocol ?? "TCP"),
      ) as Json | undefined;
      if (match?.nodePort !== undefined) port.nodePort = match.nodePort;
    }
  }
  return body;
}
