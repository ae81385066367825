// EndpointSlice (discovery.k8s.io/v1): a slice of the endpoints behind a Service, the API kube-proxy, CoreDNS and
// current clients read since Endpoints were deprecated (Kubernetes 1.33). Namespaced. The mirroring controller of the
// cluster API server makes them from Endpoints of selector-less Services; anyone may write their own.

import { isIPv4, isIPv6 } from "node:net";
import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import {
  validateDns1123Label,
  validateDns1123Subdomain,
  validateLabels,
  validateQualifiedName,
} from "../../../apimachinery/names.ts";
import {
  array,
  boolean,
  integer,
  type KindOf,
  object,
  type Static,
  string,
  stringList,
  stringMap,
} from "../../../apimachinery/schema-builders.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { objectReferenceSchema } from "../../core/v1/common.ts";
import { PROTOCOLS } from "../../core/v1/validation.ts";

export const DISCOVERY_GROUP = "discovery.k8s.io";
export const DISCOVERY_VERSION = "v1";

/** Label naming the Service a slice belongs to. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
/** Label naming the controller that manages a slice. */
export const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";

/** Limits of the API (pkg/apis/discovery/validation). */
export const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 100;
const MAX_TOPOLOGY_LABELS = 16;
const MAX_ZONE_HINTS = 8;
const ADDRESS_TYPES = ["IPv4", "IPv6", "FQDN"] as const;

const GROUP_KIND = { group: DISCOVERY_GROUP, kind: "EndpointSlice" };

const endpointSchema = object(
  {
    addresses: stringList("Addresses of this endpoint, interpreted by the slice's addressType. 1 to 100 of them."),
    conditions: object(
      {
        ready: boolean("The endpoint is ready to receive traffic."),
        serving: boolean("The endpoint can serve traffic (even while terminating)."),
        terminating: boolean("The endpoint is terminating."),
      },
      "The current state of the endpoint.",
    ),
    hostname: string("Hostname of this endpoint (a DNS label)."),
    targetRef: objectReferenceSchema("The object providing this endpoint, usually a Pod."),
    nodeName: string("The Node hosting this endpoint."),
    zone: string("The zone this endpoint is in."),
    deprecatedTopology: stringMap("Deprecated topology of the v1beta1 API; ignored."),
    hints: object(
      {
        forZones: array(object({ name: string("A zone.") }, "A zone to consume this endpoint from.", ["name"]), ""),
        forNodes: array(object({ name: string("A node.") }, "A node to consume this endpoint from.", ["name"]), ""),
      },
      "Hints for consuming this endpoint in topology-aware routing.",
    ),
  },
  "Endpoint is one address behind the Service.",
  ["addresses"],
);

const portSchema = object(
  {
    name: string("The name of this port (a DNS label, empty for a single unnamed port)."),
    port: integer("The port number; absent means all ports.", { format: "int32" }),
    protocol: string("TCP (default), UDP or SCTP."),
    appProtocol: string("The application protocol of this port."),
  },
  "EndpointPort is one port of every endpoint in the slice.",
);

function validateAddress(address: string, addressType: string, path: string): FieldError[] {
  if (addressType === "IPv4" && !isIPv4(address))
    return [fieldError.invalid(path, address, "must be a valid IPv4 address")];
  if (addressType === "IPv6" && !isIPv6(address))
    return [fieldError.invalid(path, address, "must be a valid IPv6 address")];
  if (addressType === "FQDN") {
    return validateDns1123Subdomain(address).map((detail) => fieldError.invalid(path, address, detail));
  }
  if (address === "0.0.0.0" || address === "::") return [fieldError.invalid(path, address, "may not be unspecified")];
  return [];
}

function validateEndpoint(endpoint: SliceEndpoint, addressType: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const addresses = endpoint.addresses ?? [];
  if (addresses.length === 0) errs.push(fieldError.required(`${path}.addresses`, "must contain at least 1 address"));
  else if (addresses.length > MAX_ADDRESSES)
    errs.push(fieldError.tooMany(`${path}.addresses`, addresses.length, MAX_ADDRESSES));
  else {
    addresses.forEach((address, i) => {
      errs.push(...validateAddress(address, addressType, `${path}.addresses[${i}]`));
    });
  }
  if (endpoint.hostname !== undefined) {
    for (const detail of validateDns1123Label(endpoint.hostname))
      errs.push(fieldError.invalid(`${path}.hostname`, endpoint.hostname, detail));
  }
  if (endpoint.nodeName !== undefined) {
    for (const detail of validateDns1123Subdomain(endpoint.nodeName))
      errs.push(fieldError.invalid(`${path}.nodeName`, endpoint.nodeName, detail));
  }
  const topology = endpoint.deprecatedTopology ?? {};
  if (Object.keys(topology).length > MAX_TOPOLOGY_LABELS) {
    errs.push(fieldError.tooMany(`${path}.deprecatedTopology`, Object.keys(topology).length, MAX_TOPOLOGY_LABELS));
  }
  errs.push(...validateLabels(topology, `${path}.deprecatedTopology`));
  const zones = endpoint.hints?.forZones ?? [];
  if (zones.length > MAX_ZONE_HINTS)
    errs.push(fieldError.tooMany(`${path}.hints.forZones`, zones.length, MAX_ZONE_HINTS));
  return errs;
}

function validatePorts(ports: SlicePort[]): FieldError[] {
  if (ports.length > MAX_PORTS) return [fieldError.tooMany("ports", ports.length, MAX_PORTS)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const path = `ports[${i}]`;
    const name = port.name ?? "";
    if (name !== "") {
      for (const detail of validateDns1123Label(name)) errs.push(fieldError.invalid(`${path}.name`, name, detail));
    }
    if (names.has(name)) errs.push(fieldError.duplicate(`${path}.name`, name));
    names.add(name);
    if (port.port !== undefined && (!Number.isInteger(port.port) || port.port < 1 || port.port > 65535)) {
      errs.push(fieldError.invalid(`${path}.port`, port.port, "must be between 1 and 65535, inclusive"));
    }
    if (!(PROTOCOLS as readonly (string | undefined)[]).includes(port.protocol)) {
      errs.push(fieldError.notSupported(`${path}.protocol`, port.protocol ?? "", PROTOCOLS));
    }
    if (port.appProtocol !== undefined) {
      for (const detail of validateQualifiedName(port.appProtocol))
        errs.push(fieldError.invalid(`${path}.appProtocol`, port.appProtocol, detail));
    }
  });
  return errs;
}

export function validateEndpointSlice(slice: EndpointSlice): FieldError[] {
  const errs: FieldError[] = [];
  if (!slice.addressType) errs.push(fieldError.required("addressType"));
  else if (!(ADDRESS_TYPES as readonly string[]).includes(slice.addressType)) {
    errs.push(fieldError.notSupported("addressType", slice.addressType, ADDRESS_TYPES));
  }
  const endpoints = slice.endpoints ?? [];
  if (endpoints.length > MAX_ENDPOINTS) errs.push(fieldError.tooMany("endpoints", endpoints.length, MAX_ENDPOINTS));
  else {
    endpoints.forEach((endpoint, i) => {
      errs.push(...validateEndpoint(endpoint, slice.addressType ?? "", `endpoints[${i}]`));
    });
  }
  errs.push(...validatePorts(slice.ports ?? []));
  return errs;
}

/** Defaults of the v1 API: a port's name is "" and its protocol TCP; an absent list of endpoints is empty. */
function setDefaults(slice: EndpointSlice): void {
  slice.endpoints ??= [];
  for (const port of slice.ports ?? []) {
    port.name ??= "";
    port.protocol ??= "TCP";
  }
}

/** kubectl's ENDPOINTS cell: up to three addresses, then ` + N more...`. */
function endpointsCell(slice: EndpointSlice): string {
  const all = (slice.endpoints ?? []).flatMap((endpoint) => endpoint.addresses ?? []);
  if (all.length === 0) return "<unset>";
  return all.length > 3 ? `${all.slice(0, 3).join(",")} + ${all.length - 3} more...` : all.join(",");
}

export const endpointSliceSchema = {
  addressType: string("The type of address carried by this EndpointSlice: IPv4, IPv6 or FQDN. Immutable."),
  endpoints: array(endpointSchema, "A list of unique endpoints in this slice, at most 1000."),
  ports: array(portSchema, "The network ports exposed by each endpoint in this slice, at most 100."),
};

/** An EndpointSlice (addressType and endpoints are required by validation, not by the schema's shape). */
export type EndpointSlice = KindOf<typeof endpointSliceSchema>;
export type SliceEndpoint = Static<typeof endpointSchema>;
export type SlicePort = Static<typeof portSchema>;

function portsCell(slice: EndpointSlice): string {
  const ports = slice.ports ?? [];
  if (ports.length === 0) return "<unset>";
  const shown = ports.map((port) => (port.port === undefined ? "<unset>" : String(port.port)));
  return shown.length > 3 ? `${shown.slice(0, 3).join(",")} + ${shown.length - 3} more...` : shown.join(",");
}

export const endpointSliceDefinition: ResourceDefinition = defineResource({
  group: DISCOVERY_GROUP,
  version: DISCOVERY_VERSION,
  kind: "EndpointSlice",
  plural: "endpointslices",
  singular: "endpointslice",
  namespaced: true,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description:
    "EndpointSlice represents a set of service endpoints. Most EndpointSlices are created by the EndpointSlice controller to represent the Pods selected by Service objects.",
  schema: endpointSliceSchema,
  strategy: {
    prepareForCreate: setDefaults,
    prepareForUpdate(slice, old) {
      setDefaults(slice);
      if (slice.addressType !== old.addressType) {
        throw errors.invalid(GROUP_KIND, slice.metadata.name ?? "", [
          fieldError.invalid("addressType", slice.addressType, "field is immutable"),
        ]);
      }
    },
    validate: validateEndpointSlice,
  },
  columns: [
    { name: "AddressType", type: "string", description: "The type of address.", cell: (s) => s.addressType },
    { name: "Ports", type: "string", description: "The ports of the endpoints.", cell: portsCell },
    { name: "Endpoints", type: "string", description: "The addresses of the endpoints.", cell: endpointsCell },
  ],
});
