// rbac/v1 messages (k8s.io/api rbac/v1/generated.proto): field numbers from upstream, JSON names and the `!`
// (keep zero) marks from the Go types' json tags. Notation: message-schema.ts.

import type { MessageTable } from "./message-schema.ts";

export const rbacV1Messages: MessageTable = {
  package: "k8s.io.api.rbac.v1",
  messages: {
    Role: "1 metadata meta.ObjectMeta, 2 rules []PolicyRule",
    ClusterRole: "1 metadata meta.ObjectMeta, 2 rules []PolicyRule, 3 aggregationRule AggregationRule",
    AggregationRule: "1 clusterRoleSelectors []meta.LabelSelector",
    RoleBinding: "1 metadata meta.ObjectMeta, 2 subjects []Subject, 3 roleRef RoleRef",
    ClusterRoleBinding: "1 metadata meta.ObjectMeta, 2 subjects []Subject, 3 roleRef RoleRef",
    PolicyRule:
      "1 verbs []string, 2 apiGroups []string, 3 resources []string, 4 resourceNames []string, " +
      "5 nonResourceURLs []string",
    Subject: "1 kind!, 2 apiGroup, 3 name!, 4 namespace",
    RoleRef: "1 apiGroup!, 2 kind!, 3 name!",
  },
};
