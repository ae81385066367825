// Service: a named set of ports in front of pods (or of endpoints managed elsewhere). Namespaced. Defaults and
// address allocation follow the API server: a cluster IP from the service CIDR unless headless (`None`) or
// ExternalName, node ports for NodePort and LoadBalancer; allocated values survive a PUT that omits them.

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CORE_GROUP, CORE_VERSION, NONE } from "./common.ts";
import { AllocationError, heldBy, type ServiceAddressAllocator } from "./service-addresses.ts";
import { type Service, type ServiceSpec, serviceSchema } from "./service-schema.ts";
import { invalidIps, validateService, validateServiceUpdate } from "./service-validation.ts";

export type { Service } from "./service-schema.ts";

const GROUP_KIND = { group: CORE_GROUP, kind: "Service" };
const DEFAULT_AFFINITY_TIMEOUT = 10800;

const needsClusterIP = (spec: ServiceSpec) => spec.type !== "ExternalName";
const needsNodePorts = (spec: ServiceSpec) =>
  spec.type === "NodePort" || (spec.type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts !== false);
const needsHealthCheckPort = (spec: ServiceSpec) =>
  spec.type === "LoadBalancer" && spec.externalTrafficPolicy === "Local";

function setDefaults(service: Service): ServiceSpec {
  service.spec ??= {};
  const spec = service.spec;
  spec.type ||= "ClusterIP";
  spec.sessionAffinity ||= "None";
  if (spec.sessionAffinity === "ClientIP") {
    spec.sessionAffinityConfig ??= {};
    spec.sessionAffinityConfig.clientIP ??= {};
    spec.sessionAffinityConfig.clientIP.timeoutSeconds ??= DEFAULT_AFFINITY_TIMEOUT;
  }
  for (const port of spec.ports ?? []) {
    port.protocol ||= "TCP";
    if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === "") port.targetPort = port.port;
  }
  if (spec.type !== "ExternalName") {
    spec.internalTrafficPolicy ??= "Cluster";
    spec.ipFamilyPolicy ??= "SingleStack";
    spec.ipFamilies ??= ["IPv4"];
  }
  if (spec.type === "NodePort" || spec.type === "LoadBalancer") spec.externalTrafficPolicy ??= "Cluster";
  if (spec.type === "LoadBalancer") spec.allocateLoadBalancerNodePorts ??= true;
  // clusterIP and clusterIPs[0] name the same address; either may be given.
  if (spec.clusterIP && !spec.clusterIPs?.length) spec.clusterIPs = [spec.clusterIP];
  else if (!spec.clusterIP && spec.clusterIPs?.length) spec.clusterIP = spec.clusterIPs[0];
  return spec;
}

/** Allocated values a PUT left out come from the stored Service (upstream patchAllocatedValues). */
function keepAllocated(spec: ServiceSpec, old: ServiceSpec): void {
  if (needsClusterIP(old) && needsClusterIP(spec)) {
    if (!spec.clusterIP && old.clusterIP) spec.clusterIP = old.clusterIP;
    if (!spec.clusterIPs?.length && old.clusterIPs?.length) spec.clusterIPs = [...old.clusterIPs];
  }
  if (needsNodePorts(old) && needsNodePorts(spec)) {
    const used = new Set((spec.ports ?? []).map((p) => p.nodePort).filter((p) => p));
    const byName = new Map((old.ports ?? []).map((p) => [p.name ?? "", p.nodePort]));
    for (const port of spec.ports ?? []) {
      const previous = byName.get(port.name ?? "");
      if (!port.nodePort && previous && !used.has(previous)) port.nodePort = previous;
    }
  }
  if (needsHealthCheckPort(old) && needsHealthCheckPort(spec) && !spec.healthCheckNodePort) {
    spec.healthCheckNodePort = old.healthCheckNodePort;
  }
}

/** Fields the new type does not use are dropped when the client left them as they were (dropTypeDependentFields). */
function dropTypeDependentFields(spec: ServiceSpec, old: ServiceSpec): void {
  if (spec.type === old.type) return;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!needsClusterIP(spec) && same(spec.clusterIPs, old.clusterIPs)) {
    delete spec.clusterIP;
    delete spec.clusterIPs;
    delete spec.ipFamilies;
    delete spec.ipFamilyPolicy;
    delete spec.internalTrafficPolicy;
  }
  if (!needsNodePorts(spec) && needsNodePorts(old)) {
    const oldPorts = new Map((old.ports ?? []).map((p) => [p.name ?? "", p.nodePort]));
    for (const port of spec.ports ?? []) if (port.nodePort === oldPorts.get(port.name ?? "")) delete port.nodePort;
  }
  if (!needsHealthCheckPort(spec) && spec.healthCheckNodePort === old.healthCheckNodePort) {
    delete spec.healthCheckNodePort;
  }
  if (spec.type !== "LoadBalancer") {
    if (spec.allocateLoadBalancerNodePorts === old.allocateLoadBalancerNodePorts)
      delete spec.allocateLoadBalancerNodePorts;
    if (spec.loadBalancerClass === old.loadBalancerClass) delete spec.loadBalancerClass;
  }
  if (
    spec.type !== "NodePort" &&
    spec.type !== "LoadBalancer" &&
    spec.externalTrafficPolicy === old.externalTrafficPolicy
  ) {
    delete spec.externalTrafficPolicy;
  }
}

/** Takes the addresses `spec` needs and `old` did not hold; throws 422 (or 500 when a range is full). */
function allocate(allocator: ServiceAddressAllocator, service: Service, old?: Service): void {
  const spec = service.spec ?? {};
  const held = old ? heldBy(old) : { ips: [], ports: [] };
  const errs: FieldError[] = [];
  const attempt = <T>(take: () => T, field: string, badValue: unknown, ips?: string[]): T | undefined => {
    try {
      return take();
    } catch (error) {
      if (!(error instanceof AllocationError)) throw error;
      if (error.full) throw errors.internal(error.message);
      errs.push(ips ? invalidIps(field, ips, error.message) : fieldError.invalid(field, badValue, error.message));
      return undefined;
    }
  };
  if (needsClusterIP(spec) && spec.clusterIP !== "None") {
    const requested = spec.clusterIP || undefined;
    if (!requested || !held.ips.includes(requested)) {
      const ip = attempt(
        () => allocator.allocateClusterIP(requested),
        "spec.clusterIPs",
        requested,
        spec.clusterIPs ?? [],
      );
      if (ip) {
        spec.clusterIP = ip;
        spec.clusterIPs = [ip];
      }
    }
  }
  if (needsNodePorts(spec)) {
    (spec.ports ?? []).forEach((port, i) => {
      const requested = port.nodePort || undefined;
      if (requested && held.ports.includes(requested)) return;
      const taken = attempt(() => allocator.allocateNodePort(requested), `spec.ports[${i}].nodePort`, requested ?? 0);
      if (taken) port.nodePort = taken;
    });
  }
  if (needsHealthCheckPort(spec)) {
    const requested = spec.healthCheckNodePort || undefined;
    if (!requested || !held.ports.includes(requested)) {
      const taken = attempt(() => allocator.allocateNodePort(requested), "spec.healthCheckNodePort", requested ?? 0);
      if (taken) spec.healthCheckNodePort = taken;
    }
  }
  if (errs.length) throw errors.invalid(GROUP_KIND, service.metadata.name ?? "", errs);
}

/** Validation before allocation, so an invalid Service reserves nothing. */
function validateOrThrow(service: Service): void {
  const errs = validateService(service);
  if (errs.length) throw errors.invalid(GROUP_KIND, service.metadata.name ?? "", errs);
}

function portsCell(service: Service): string {
  const ports = service.spec?.ports ?? [];
  if (ports.length === 0) return NONE;
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`)).join(",");
}

function externalIpCell(service: Service): string {
  const spec = service.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type) {
    case "ClusterIP":
    case "NodePort":
      return external.length ? external.join(",") : NONE;
    case "LoadBalancer": {
      const ingress = (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname).filter(Boolean);
      const all = [...ingress, ...external];
      return all.length ? all.join(",") : "<pending>";
    }
    case "ExternalName":
      return spec.externalName ?? "";
    default:
      return "<unknown>";
  }
}

function selectorCell(service: Service): string {
  const selector = service.spec?.selector ?? {};
  const keys = Object.keys(selector).sort();
  return keys.length ? keys.map((k) => `${k}=${selector[k]}`).join(",") : NONE;
}

export function createServiceDefinition(allocator: ServiceAddressAllocator): ResourceDefinition {
  return defineResource({
    group: CORE_GROUP,
    version: CORE_VERSION,
    kind: "Service",
    protobuf: { message: "k8s.io.api.core.v1.Service" },
    strategicMergePatch: true,
    plural: "services",
    singular: "service",
    shortNames: ["svc"],
    categories: ["all"],
    namespaced: true,
    // As kube-apiserver: a PUT without resourceVersion replaces the object.
    allowUnconditionalUpdate: true,
    description:
      "Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.",
    schema: serviceSchema,
    statusSubresource: true,
    strategy: {
      prepareForCreate(service) {
        setDefaults(service);
        service.status = { loadBalancer: {} };
        validateOrThrow(service);
        allocate(allocator, service);
      },
      prepareForUpdate(service, old) {
        const spec = setDefaults(service);
        keepAllocated(spec, old.spec ?? {});
        dropTypeDependentFields(spec, old.spec ?? {});
        validateOrThrow(service);
        const immutable = validateServiceUpdate(service, old);
        if (immutable.length) throw errors.invalid(GROUP_KIND, service.metadata.name ?? "", immutable);
        allocate(allocator, service, old);
      },
      validate: (service) => validateService(service),
      validateUpdate: (service, old) => validateServiceUpdate(service, old),
    },
    noAgeColumn: true,
    columns: [
      {
        name: "Type",
        type: "string",
        description: "How the Service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName.",
        cell: (s) => s.spec?.type,
      },
      {
        name: "Cluster-IP",
        type: "string",
        description: "The IP address of the service.",
        cell: (s) => s.spec?.clusterIP || NONE,
      },
      {
        name: "External-IP",
        type: "string",
        description: "External addresses of the service.",
        cell: externalIpCell,
      },
      { name: "Port(s)", type: "string", description: "The ports exposed by the service.", cell: portsCell },
      {
        name: "Age",
        type: "date",
        description: "Time since the service was created.",
        cell: (s) => s.metadata.creationTimestamp,
      },
      {
        name: "Selector",
        type: "string",
        priority: 1,
        description: "Route service traffic to pods with label keys and values matching this selector.",
        cell: selectorCell,
      },
    ],
    selectableFields: {
      "spec.clusterIP": (s) => s.spec?.clusterIP ?? "",
      "spec.type": (s) => s.spec?.type ?? "",
    },
  });
}
