// authorization/v1 SelfSubjectAccessReview and SelfSubjectRulesReview (k8s.io/api authorization/v1/generated.proto),
// which `kubectl auth can-i` and `can-i --list` send: field numbers from upstream, `!` marks from the Go json tags.
// Notation: message-schema.ts.

import type { MessageTable } from "./message-schema.ts";

export const authorizationV1Messages: MessageTable = {
  package: "k8s.io.api.authorization.v1",
  messages: {
    SelfSubjectAccessReview:
      "1 metadata meta.ObjectMeta, 2 spec SelfSubjectAccessReviewSpec, 3 status SubjectAccessReviewStatus",
    SelfSubjectAccessReviewSpec:
      "1 resourceAttributes ResourceAttributes, 2 nonResourceAttributes NonResourceAttributes",
    ResourceAttributes:
      "1 namespace, 2 verb, 3 group, 4 version, 5 resource, 6 subresource, 7 name, " +
      "8 fieldSelector FieldSelectorAttributes, 9 labelSelector LabelSelectorAttributes",
    NonResourceAttributes: "1 path, 2 verb",
    SubjectAccessReviewStatus: "1 allowed! bool, 4 denied bool, 2 reason, 3 evaluationError",
    FieldSelectorAttributes: "1 rawSelector, 2 requirements []meta.FieldSelectorRequirement",
    LabelSelectorAttributes: "1 rawSelector, 2 requirements []meta.LabelSelectorRequirement",
    SelfSubjectRulesReview:
      "1 metadata meta.ObjectMeta, 2 spec SelfSubjectRulesReviewSpec, 3 status SubjectRulesReviewStatus",
    SelfSubjectRulesReviewSpec: "1 namespace",
    SubjectRulesReviewStatus:
      "1 resourceRules []ResourceRule, 2 nonResourceRules []NonResourceRule, 3 incomplete! bool, 4 evaluationError",
    ResourceRule: "1 verbs []string, 2 apiGroups []string, 3 resources []string, 4 resourceNames []string",
    NonResourceRule: "1 verbs []string, 2 nonResourceURLs []string",
  },
};
