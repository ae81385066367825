// SelfSubjectReview (authentication.k8s.io/v1): who am I, as the server authenticated me. `kubectl auth whoami`
// asks it. Create-only, no storage; every authenticated caller may ask (it describes only the caller). Credentials
// never appear in it: `extra` holds what authentication recorded (key names, scopes), never a secret.

import { object, openObject, string, stringList } from "../../../apimachinery/schema-builders.ts";
import type { KubeObject } from "../../../apimachinery/types.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";

export const AUTHENTICATION_GROUP = "authentication.k8s.io";
const KIND = "SelfSubjectReview";
const DESCRIPTION = "SelfSubjectReview contains the user information that the server has about the caller.";

const schema = {
  status: object(
    {
      userInfo: object(
        {
          username: string("The name that uniquely identifies this user among all active users."),
          uid: string("A unique value that identifies this user across time."),
          groups: stringList("The names of groups this user is a part of."),
          extra: openObject("Any additional information provided by the authenticator."),
        },
        "User attributes of the user making this request.",
      ),
    },
    "The user information about the caller, filled in by the server.",
  ),
};

export const selfSubjectReviewDefinition: ResourceDefinition = {
  group: AUTHENTICATION_GROUP,
  version: "v1",
  kind: KIND,
  plural: "selfsubjectreviews",
  singular: "selfsubjectreview",
  namespaced: false,
  description: DESCRIPTION,
  schema,
  strategy: {},
  protobuf: { message: "k8s.io.api.authentication.v1.SelfSubjectReview" },
  action: {
    kind: KIND,
    description: DESCRIPTION,
    schema,
    verbs: ["create"],
    async handle({ context }) {
      const { name, uid, groups, extra } = context.user;
      const userInfo: Record<string, unknown> = { username: name, groups: [...groups] };
      if (uid) userInfo.uid = uid;
      if (extra && Object.keys(extra).length > 0) userInfo.extra = extra;
      const review: KubeObject = {
        apiVersion: `${AUTHENTICATION_GROUP}/v1`,
        kind: KIND,
        metadata: { creationTimestamp: null },
        status: { userInfo },
      };
      return review;
    },
  },
};
