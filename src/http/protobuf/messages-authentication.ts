// authentication/v1 SelfSubjectReview (k8s.io/api authentication/v1/generated.proto), which `kubectl auth whoami`
// sends: field numbers from upstream. Notation: message-schema.ts.

import type { MessageTable } from "./message-schema.ts";

export const authenticationV1Messages: MessageTable = {
  package: "k8s.io.api.authentication.v1",
  messages: {
    SelfSubjectReview: "1 metadata meta.ObjectMeta, 2 status SelfSubjectReviewStatus",
    SelfSubjectReviewStatus: "1 userInfo UserInfo",
    UserInfo: "1 username, 2 uid, 3 groups []string",
  },
};
