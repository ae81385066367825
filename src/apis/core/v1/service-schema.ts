// Service: schema and the types derived from it (descriptions become `kubectl explain`).

import {
  array,
  boolean,
  integer,
  intOrString,
  item,
  type KindOf,
  object,
  type Static,
  string,
  stringList,
  stringMap,
} from "../../../apimachinery/schema-builders.ts";
import { mergedByKey } from "./common.ts";

export const SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"] as const;
export type ServiceType = (typeof SERVICE_TYPES)[number];

const portSchema = object(
  {
    name: string(
      "The name of this port within the service. This must be a DNS_LABEL. All ports within a ServiceSpec must have unique names. Optional if only one ServicePort is defined on this service.",
    ),
    protocol: string('The IP protocol for this port: "TCP" (default), "UDP" or "SCTP".', { default: "TCP" }),
    appProtocol: string("The application protocol for this port, used as a hint for implementations."),
    port: integer("The port that will be exposed by this service.", { format: "int32" }),
    targetPort: intOrString(
      "Number or name of the port to access on the pods targeted by the service. Number must be in the range 1 to 65535. Name must be an IANA_SVC_NAME. Defaults to the value of the 'port' field.",
    ),
    nodePort: integer(
      "The port on each node on which this service is exposed when type is NodePort or LoadBalancer. Usually assigned by the system.",
      { format: "int32" },
    ),
  },
  "ServicePort contains information on service's port.",
  ["port"],
);

const spec = object(
  {
    ports: mergedByKey(
      array(portSchema, "The list of ports that are exposed by this service.", {
        type: "map",
        keys: ["port", "protocol"],
      }),
      "port",
    ),
    selector: stringMap(
      "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify.",
    ),
    clusterIP: string(
      'The IP address of the service, usually assigned randomly from the service CIDR. "None" makes a headless service. Cannot be changed once set (except to and from ExternalName).',
    ),
    clusterIPs: array(item.string(), "IP addresses assigned to this service; the first equals clusterIP.", {
      type: "set",
    }),
    type: string('How the Service is exposed: "ClusterIP" (default), "NodePort", "LoadBalancer" or "ExternalName".'),
    externalIPs: stringList("IP addresses for which nodes in the cluster will also accept traffic for this service."),
    externalName: string(
      "The external reference that discovery mechanisms return as an alias for this service (a CNAME record). Requires type ExternalName; must be a lowercase RFC-1123 hostname.",
    ),
    sessionAffinity: string('"ClientIP" enables client IP based session affinity; "None" (default) disables it.'),
    sessionAffinityConfig: object(
      {
        clientIP: object(
          {
            timeoutSeconds: integer("Seconds of ClientIP session sticky time (1 to 86400, default 10800).", {
              format: "int32",
            }),
          },
          "Configurations of Client IP based session affinity.",
        ),
      },
      "The configurations of session affinity.",
    ),
    loadBalancerIP: string("Deprecated: the IP a LoadBalancer should use, when the implementation supports it."),
    loadBalancerSourceRanges: stringList("CIDRs allowed to reach a LoadBalancer, when the implementation supports it."),
    loadBalancerClass: string("The class of the load balancer implementation this Service belongs to."),
    externalTrafficPolicy: string(
      'How nodes distribute service traffic they receive on externally-facing addresses: "Cluster" or "Local".',
    ),
    internalTrafficPolicy: string(
      'How nodes distribute service traffic they receive on the ClusterIP: "Cluster" or "Local".',
    ),
    healthCheckNodePort: integer("The healthcheck nodePort for the service (LoadBalancer with Local policy).", {
      format: "int32",
    }),
    publishNotReadyAddresses: boolean(
      "Whether endpoints of this Service are published even when their pods are not ready.",
    ),
    ipFamilies: array(item.string(), 'IP families assigned to this service: "IPv4", "IPv6".', {
      type: "set",
    }),
    ipFamilyPolicy: string('"SingleStack" (default), "PreferDualStack" or "RequireDualStack".'),
    allocateLoadBalancerNodePorts: boolean("Whether NodePorts are allocated for a LoadBalancer (default true)."),
    trafficDistribution: string("How traffic is distributed to Service endpoints, e.g. PreferClose."),
  },
  "Spec defines the behavior of a service.",
);

const status = object(
  {
    loadBalancer: object(
      {
        ingress: array(
          object(
            {
              ip: string("IP of the load-balancer ingress point."),
              hostname: string("Hostname of the load-balancer ingress point."),
              ipMode: string("How the load-balancer IP behaves: VIP or Proxy."),
              ports: array(
                object(
                  {
                    port: integer("Port number of the service port.", { format: "int32" }),
                    protocol: string("Protocol of the service port."),
                    error: string("Problem with the service port, if any."),
                  },
                  "Status of a service port.",
                ),
                "Records of the service ports.",
              ),
            },
            "A load-balancer ingress point.",
          ),
          "Ingress points of the load-balancer.",
        ),
      },
      "The current status of the load-balancer, if one is present.",
    ),
    conditions: mergedByKey(
      array(
        object(
          {
            type: string("Type of condition."),
            status: string("Status of the condition: True, False, Unknown."),
            observedGeneration: integer("The generation the condition was set for."),
            lastTransitionTime: string("When the condition last changed.", { format: "date-time" }),
            reason: string("CamelCase reason of the last transition."),
            message: string("Human-readable message."),
          },
          "A condition of the service.",
        ),
        "Current service state.",
        { type: "map", keys: ["type"] },
      ),
      "type",
    ),
  },
  "Most recently observed status of the service. Populated by the system.",
);

export const serviceSchema = { spec, status };

export type Service = KindOf<typeof serviceSchema>;
export type ServiceSpec = Static<typeof spec>;
export type ServicePort = Static<typeof portSchema>;
