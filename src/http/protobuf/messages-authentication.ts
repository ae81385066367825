// authentication/v1 SelfSubjectReview and TokenRequest (k8s.io/api authentication/v1/generated.proto), which
// `kubectl auth whoami` and `kubectl create token` send: field numbers from upstream. Notation: message-schema.ts.

import type { MessageTable } from "./message-schema.ts";

export const authenticationV1Messages: MessageTable = {
  package: "k8s.io.api.authentication.v1",
  messages: {
    SelfSubjectReview: "1 metadata meta.ObjectMeta, 2 status SelfSubjectReviewStatus",
    SelfSubjectReviewStatus: "1 userInfo UserInfo",
    UserInfo: "1 username, 2 uid, 3 groups []string",
    TokenRequest: "1 metadata meta.ObjectMeta, 2 spec TokenRequestSpec, 3 status TokenRequestStatus",
    TokenRequestSpec: "1 audiences []string, 4 expirationSeconds int64, 3 boundObjectRef BoundObjectReference",
    TokenRequestStatus: "1 token, 2 expirationTimestamp Time",
    BoundObjectReference: "1 kind, 2 apiVersion, 3 name, 4 uid",
  },
};
