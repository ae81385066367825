// Services (core/v1). The host Service is asked for the virtual Service's cluster IP and node ports; where the host
// refuses them it allocates its own, and the virtual Service then shows what the host allocated (a cluster IP by
// recreating it, node ports by an update) and the host's load balancer status, so both sides tell the truth.

import { isDeepStrictEqual } from "node:util";
import { cloneJson } from "../patches/json-clone.ts";
import { hostMetadata } from "./host-metadata.ts";
import { isObject, type Json } from "./kind-json.ts";
import type { SyncedKind, VirtualChange } from "./synced-kind.ts";
import type { WireObject } from "./types.ts";

/** The virtual cluster's own API server Service and Endpoints: written into the virtual cluster, never synced. */
export const isKubernetesService = (namespace: string, name: string): boolean =>
  namespace === "default" && name === "kubernetes";

/** True when a Service selects Pods itself; its Endpoints then belong to the host's own endpoints controller. */
export function hasSelector(service: WireObject | undefined): boolean {
  const spec = service?.spec;
  return isObject(spec) && isObject(spec.selector) && Object.keys(spec.selector).length > 0;
}

type Port = { port?: number; protocol?: string; nodePort?: number; targetPort?: unknown };
type Spec = Json & { clusterIP?: string; clusterIPs?: string[]; ports?: Port[]; type?: string };

const specOf = (object: WireObject): Spec => (isObject(object.spec) ? (object.spec as Spec) : {});
const isHeadless = (spec: Spec): boolean => spec.clusterIP === "None";
const samePort = (a: Port, b: Port) => a.port === b.port && (a.protocol ?? "TCP") === (b.protocol ?? "TCP");

/** Fields the host allocates or defaults, removed or filled in on both sides before comparing. */
const ALLOCATED_FIELDS = [
  "clusterIP",
  "clusterIPs",
  "ipFamilies",
  "ipFamilyPolicy",
  "healthCheckNodePort",
  "allocateLoadBalancerNodePorts",
];

function normalizedSpec(object: WireObject): unknown {
  if (!isObject(object.spec)) return object.spec;
  const spec = cloneJson(object.spec) as Spec;
  const headless = isHeadless(spec);
  for (const field of ALLOCATED_FIELDS) delete spec[field];
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
  if (Array.isArray(spec.ports)) {
    spec.ports = spec.ports.map((port) =>
      isObject(port) ? { ...port, protocol: port.protocol ?? "TCP", targetPort: port.targetPort ?? port.port } : port,
    );
  }
  return spec;
}

/** `ports` with each port's node port taken from `from` (matched by port and protocol). */
function withNodePortsOf(ports: Port[] | undefined, from: Port[] | undefined): Port[] | undefined {
  return ports?.map((port) => {
    const match = from?.find((other) => isObject(other) && samePort(other, port));
    const copy = { ...port };
    if (match?.nodePort !== undefined) copy.nodePort = match.nodePort;
    else delete copy.nodePort;
    return copy;
  });
}

/** The desired host Service with the virtual Service's cluster IP asked for (node ports are already in it). */
function askingVirtualAddresses(desired: WireObject, virtual: WireObject): WireObject {
  const ip = specOf(virtual).clusterIP;
  if (!ip || ip === "None" || isHeadless(specOf(desired))) return desired;
  return { ...desired, spec: { ...specOf(desired), clusterIP: ip, clusterIPs: [ip] } };
}

/** The desired object without requested node ports: the host allocates its own. */
function withoutNodePorts(desired: WireObject): WireObject {
  const spec = specOf(desired);
  return { ...desired, spec: { ...spec, ports: withNodePortsOf(spec.ports, undefined) } };
}

/** An update keeps what the host allocated that the desired object does not ask for (they cannot change on update). */
function keepingAllocations(desired: WireObject, actual: WireObject, nodePortsFrom: "desired" | "host"): WireObject {
  const body = cloneJson(desired) as WireObject;
  body.metadata = { ...body.metadata, resourceVersion: actual.metadata?.resourceVersion };
  const spec = specOf(body);
  const old = specOf(actual);
  for (const field of ALLOCATED_FIELDS)
    if (spec[field] === undefined && old[field] !== undefined) spec[field] = old[field];
  if (Array.isArray(spec.ports)) {
    spec.ports = spec.ports.map((port) => {
      if (nodePortsFrom === "desired" && port.nodePort !== undefined) return port;
      const match = old.ports?.find((other) => isObject(other) && samePort(other, port));
      return match?.nodePort !== undefined ? { ...port, nodePort: match.nodePort } : port;
    });
  }
  body.spec = spec;
  return body;
}

/** The virtual Service as it would be written back: server-set metadata dropped, `spec` replaced. */
function virtualWithSpec(virtual: WireObject, spec: Spec, keepVersion: boolean): WireObject {
  const metadata = { ...virtual.metadata };
  for (const field of ["uid", "creationTimestamp", "managedFields", "generation"] as const) delete metadata[field];
  if (!keepVersion) delete metadata.resourceVersion;
  return { apiVersion: "v1", kind: "Service", metadata, spec };
}

/** What the virtual Service must change to show the host's cluster IP, node ports and load balancer status. */
function fromHost(virtual: WireObject, host: WireObject): VirtualChange | undefined {
  const spec = specOf(virtual);
  const hostSpec = specOf(host);
  const hostIP = hostSpec.clusterIP;
  const hasClusterIP = !isHeadless(spec) && spec.type !== "ExternalName";
  const ports = withNodePortsOf(spec.ports, hostSpec.ports);
  if (hasClusterIP && hostIP && hostIP !== "None" && spec.clusterIP !== hostIP) {
    // A cluster IP cannot change in place: recreated, as upstream does (with the host's node ports at once).
    const changed = { ...spec, clusterIP: hostIP, clusterIPs: [hostIP], ports };
    return {
      verb: "recreate",
      object: virtualWithSpec(virtual, changed, false),
      what: `the host cluster IP ${hostIP}`,
    };
  }
  if (!isDeepStrictEqual(ports ?? [], spec.ports ?? [])) {
    const nodePorts = (ports ?? []).map((port) => port.nodePort).filter((port) => port !== undefined);
    return {
      verb: "update",
      object: virtualWithSpec(virtual, { ...spec, ports }, true),
      what: `the host node ports ${nodePorts.join(", ")}`,
    };
  }
  const status = isObject(virtual.status) ? virtual.status : {};
  const hostStatus = isObject(host.status) ? host.status : {};
  const balancer = isObject(hostStatus.loadBalancer) ? hostStatus.loadBalancer : {};
  if (!isDeepStrictEqual(balancer, isObject(status.loadBalancer) ? status.loadBalancer : {})) {
    const object = { ...virtualWithSpec(virtual, spec, true), status: { ...status, loadBalancer: balancer } };
    return { verb: "status", object, what: "the host load balancer status" };
  }
  return undefined;
}

/** The bodies without repeats (a Service without node ports has nothing to fall back to). */
const distinct = (bodies: WireObject[]): WireObject[] =>
  bodies.filter((body, index) => bodies.findIndex((other) => isDeepStrictEqual(other, body)) === index);

export const servicesKind: SyncedKind = {
  resource: "services",
  kind: "Service",
  apiVersion: "v1",
  settings: "services",
  enabled: (toHost) => toHost.services.enabled,
  /**
   * The virtual Service's spec with its node ports requested; the cluster IP is asked for at create time only (a
   * headless Service stays headless); the selector is translated like labels, so it selects only Pods synced from
   * the same virtual namespace; status is the host's.
   */
  translate(virtual, options) {
    const spec = isObject(virtual.spec) ? (cloneJson(virtual.spec) as Spec) : {};
    if (isHeadless(spec)) spec.clusterIPs = ["None"];
    else {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    delete spec.healthCheckNodePort;
    if (hasSelector(virtual)) {
      spec.selector = options.translator.hostSelector(spec.selector, virtual.metadata?.namespace ?? "");
    } else {
      delete spec.selector;
    }
    return { apiVersion: "v1", kind: "Service", metadata: hostMetadata(virtual, options), spec };
  },
  wanted: (virtual) => !isKubernetesService(virtual.metadata?.namespace ?? "", virtual.metadata?.name ?? ""),
  content: normalizedSpec,
  // The virtual Service's addresses first; a host that refuses them (taken, or outside its ranges) picks its own.
  createBodies: (desired, virtual) =>
    distinct([askingVirtualAddresses(desired, virtual), desired, withoutNodePorts(desired)]),
  updateBodies: (desired, actual) => [
    keepingAllocations(desired, actual, "desired"),
    keepingAllocations(desired, actual, "host"),
  ],
  fromHost,
  owner: "virtual-cluster-service",
  referenceable: false,
  confidential: false,
};
