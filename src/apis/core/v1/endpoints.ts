// Endpoints: the addresses behind a Service (subsets of addresses and ports). Namespaced; a Service and its
// Endpoints share a name.

import { isIP } from "node:net";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { validateDns1123Label, validateDns1123Subdomain } from "../../../apimachinery/names.ts";
import { array, integer, type KindOf, object, type Static, string } from "../../../apimachinery/schema-builders.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CORE_GROUP, CORE_VERSION, NONE, objectReferenceSchema } from "./common.ts";
import { IP_DETAIL, validatePortNumber, validateProtocol } from "./validation.ts";

const addressSchema = object(
  {
    ip: string("The IP of this endpoint."),
    hostname: string("The Hostname of this endpoint."),
    nodeName: string("Optional: Node hosting this endpoint."),
    targetRef: objectReferenceSchema("Reference to object providing the endpoint."),
  },
  "EndpointAddress is a tuple that describes single IP address.",
  ["ip"],
);

const portSchema = object(
  {
    name: string(
      "The name of this port; must match the name in the ServicePort. Optional when only one port is defined.",
    ),
    port: integer("The port number of the endpoint.", { format: "int32" }),
    protocol: string('The IP protocol for this port: "TCP" (default), "UDP" or "SCTP".'),
    appProtocol: string("The application protocol for this port."),
  },
  "EndpointPort is a tuple that describes a single port.",
  ["port"],
);

const subsetSchema = object(
  {
    addresses: array(addressSchema, "IP addresses which offer the related ports that are marked as ready."),
    notReadyAddresses: array(
      addressSchema,
      "IP addresses which offer the related ports but are not currently marked as ready.",
    ),
    ports: array(portSchema, "Port numbers available on the related IP addresses."),
  },
  "EndpointSubset is a group of addresses with a common set of ports.",
);

export const endpointsSchema = {
  subsets: array(
    subsetSchema,
    "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share.",
  ),
};

export type Endpoints = KindOf<typeof endpointsSchema>;
export type EndpointSubset = Static<typeof subsetSchema>;
export type EndpointAddress = Static<typeof addressSchema>;
export type EndpointPort = Static<typeof portSchema>;

function validateAddress(address: EndpointAddress, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ip = address.ip ?? "";
  if (!isIP(ip)) errs.push(fieldError.invalid(`${path}.ip`, ip, IP_DETAIL));
  else if (ip === "0.0.0.0" || ip === "::")
    errs.push(fieldError.invalid(`${path}.ip`, ip, "may not be unspecified (0.0.0.0)"));
  else if (isMulticast(ip))
    errs.push(fieldError.invalid(`${path}.ip`, ip, "may not be in the multicast range (224.0.0.0/4)"));
  if (address.hostname) {
    for (const detail of validateDns1123Label(address.hostname))
      errs.push(fieldError.invalid(`${path}.hostname`, address.hostname, detail));
  }
  if (address.nodeName) {
    for (const detail of validateDns1123Subdomain(address.nodeName))
      errs.push(fieldError.invalid(`${path}.nodeName`, address.nodeName, detail));
  }
  return errs;
}

function isMulticast(ip: string): boolean {
  if (isIP(ip) === 4) {
    const first = Number(ip.split(".")[0]);
    return first >= 224 && first <= 239;
  }
  return ip.toLowerCase().startsWith("ff");
}

function validatePorts(ports: EndpointPort[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const at = `${path}[${i}]`;
    if (ports.length > 1 && !port.name) errs.push(fieldError.required(`${at}.name`));
    else if (port.name) {
      for (const detail of validateDns1123Label(port.name))
        errs.push(fieldError.invalid(`${at}.name`, port.name, detail));
      if (names.has(port.name)) errs.push(fieldError.duplicate(`${at}.name`, port.name));
      names.add(port.name);
    }
    errs.push(...validatePortNumber(port.port, `${at}.port`));
    errs.push(...validateProtocol(port.protocol, `${at}.protocol`));
  });
  return errs;
}

export function validateEndpoints(endpoints: Endpoints): FieldError[] {
  const errs: FieldError[] = [];
  (endpoints.subsets ?? []).forEach((subset, i) => {
    const path = `subsets[${i}]`;
    if (!subset.addresses?.length && !subset.notReadyAddresses?.length) {
      errs.push(fieldError.required(path, "must specify `addresses` or `notReadyAddresses`"));
    }
    for (const field of ["addresses", "notReadyAddresses"] as const) {
      (subset[field] ?? []).forEach((address, j) => {
        errs.push(...validateAddress(address, `${path}.${field}[${j}]`));
      });
    }
    errs.push(...validatePorts(subset.ports ?? [], `${path}.ports`));
  });
  return errs;
}

/** kubectl's ENDPOINTS cell: up to three `ip:port` (per port, then per address), then ` + N more...`. */
export function endpointsCell(endpoints: Endpoints): string {
  if (!endpoints.subsets?.length) return NONE;
  const all: string[] = [];
  for (const subset of endpoints.subsets) {
    const addresses = subset.addresses ?? [];
    if (!subset.ports?.length) for (const address of addresses) all.push(address.ip);
    for (const port of subset.ports ?? []) {
      for (const { ip } of addresses) all.push(`${ip.includes(":") ? `[${ip}]` : ip}:${port.port}`);
    }
  }
  return all.length > 3 ? `${all.slice(0, 3).join(",")} + ${all.length - 3} more...` : all.join(",");
}

export const endpointsDefinition: ResourceDefinition = defineResource({
  group: CORE_GROUP,
  version: CORE_VERSION,
  kind: "Endpoints",
  protobuf: { message: "k8s.io.api.core.v1.Endpoints" },
  strategicMergePatch: true,
  plural: "endpoints",
  singular: "endpoints",
  shortNames: ["ep"],
  namespaced: true,
  // As kube-apiserver: a PUT without resourceVersion replaces the object.
  allowUnconditionalUpdate: true,
  description:
    "Endpoints is a collection of endpoints that implement the actual service. Each subset is a set of addresses with a common set of ports.",
  schema: endpointsSchema,
  strategy: {
    prepareForCreate(endpoints) {
      for (const subset of endpoints.subsets ?? []) for (const port of subset.ports ?? []) port.protocol ||= "TCP";
    },
    prepareForUpdate(endpoints) {
      for (const subset of endpoints.subsets ?? []) for (const port of subset.ports ?? []) port.protocol ||= "TCP";
    },
    validate: (endpoints) => validateEndpoints(endpoints),
  },
  columns: [{ name: "Endpoints", type: "string", description: "Endpoints of the service.", cell: endpointsCell }],
});
