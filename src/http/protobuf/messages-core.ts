// core/v1 messages (k8s.io/api core/v1/generated.proto) for the kinds the cluster API server serves: field numbers
// from upstream, JSON names and the `!` (keep zero) marks from the Go types' json tags. Notation: message-schema.ts.

import type { MessageTable } from "./message-schema.ts";

export const coreV1Messages: MessageTable = {
  package: "k8s.io.api.core.v1",
  messages: {
    Namespace: "1 metadata meta.ObjectMeta, 2 spec NamespaceSpec, 3 status NamespaceStatus",
    NamespaceSpec: "1 finalizers []string",
    NamespaceStatus: "1 phase, 2 conditions []NamespaceCondition",
    NamespaceCondition: "1 type!, 2 status!, 4 lastTransitionTime Time, 5 reason, 6 message",
    Secret: "1 metadata meta.ObjectMeta, 5 immutable! bool, 2 data map<bytes>, 4 stringData map<string>, 3 type",
    ConfigMap: "1 metadata meta.ObjectMeta, 4 immutable! bool, 2 data map<string>, 3 binaryData map<bytes>",
    ServiceAccount:
      "1 metadata meta.ObjectMeta, 2 secrets []ObjectReference, 3 imagePullSecrets []LocalObjectReference, " +
      "4 automountServiceAccountToken! bool",
    ObjectReference: "1 kind, 2 namespace, 3 name, 4 uid, 5 apiVersion, 6 resourceVersion, 7 fieldPath",
    LocalObjectReference: "1 name",
    Service: "1 metadata meta.ObjectMeta, 2 spec ServiceSpec, 3 status ServiceStatus",
    ServiceSpec:
      "1 ports []ServicePort, 2 selector map<string>, 3 clusterIP, 18 clusterIPs []string, 4 type, " +
      "5 externalIPs []string, 7 sessionAffinity, 8 loadBalancerIP, 9 loadBalancerSourceRanges []string, " +
      "10 externalName, 11 externalTrafficPolicy, 12 healthCheckNodePort int32, 13 publishNotReadyAddresses bool, " +
      "14 sessionAffinityConfig SessionAffinityConfig, 19 ipFamilies []string, 17 ipFamilyPolicy!, " +
      "20 allocateLoadBalancerNodePorts! bool, 21 loadBalancerClass!, 22 internalTrafficPolicy!, " +
      "23 trafficDistribution!",
    ServicePort: "1 name, 2 protocol, 6 appProtocol!, 3 port! int32, 4 targetPort IntOrString, 5 nodePort int32",
    ServiceStatus: "1 loadBalancer LoadBalancerStatus, 2 conditions []meta.Condition",
    LoadBalancerStatus: "1 ingress []LoadBalancerIngress",
    LoadBalancerIngress: "1 ip, 2 hostname, 3 ipMode!, 4 ports []PortStatus",
    PortStatus: "1 port! int32, 2 protocol!, 3 error!",
    SessionAffinityConfig: "1 clientIP ClientIPConfig",
    ClientIPConfig: "1 timeoutSeconds! int32",
    Endpoints: "1 metadata meta.ObjectMeta, 2 subsets []EndpointSubset",
    EndpointSubset: "1 addresses []EndpointAddress, 2 notReadyAddresses []EndpointAddress, 3 ports []EndpointPort",
    EndpointAddress: "1 ip!, 3 hostname, 4 nodeName!, 2 targetRef ObjectReference",
    EndpointPort: "1 name, 2 port! int32, 3 protocol, 4 appProtocol!",
    Event:
      "1 metadata meta.ObjectMeta, 2 involvedObject ObjectReference, 3 reason, 4 message, 5 source EventSource, " +
      "6 firstTimestamp Time, 7 lastTimestamp Time, 8 count int32, 9 type, 10 eventTime MicroTime, " +
      "11 series EventSeries, 12 action, 13 related ObjectReference, 14 reportingComponent!, 15 reportingInstance!",
    EventSource: "1 component, 2 host",
    EventSeries: "1 count int32, 2 lastObservedTime MicroTime",
  },
};
