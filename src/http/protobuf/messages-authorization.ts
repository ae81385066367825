// authorization/v1 SelfSubjectAccessReview (k8s.io/api authorization/v1/generated.proto), which `kubectl auth
// can-i` sends: field numbers from upstream, `!` marks from the Go json tags. Notation: message-schema.ts.

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
  },
};
