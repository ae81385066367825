// SelfSubjectAccessReview (POST answers 201): may the caller do a verb on a resource or a non-resource path?
// Answered by the authorizer that guards the caller's own requests (access-key scope included on the platform).
// `kubectl auth can-i` uses it. One implementation, served by the cluster API server as authorization.k8s.io/v1
// (below) and by the platform in its own group (management/v1/selfsubjectaccessreview.ts).

import { boolean, object, type Static, string } from "../../../apimachinery/schema-builders.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { reviewAction } from "./review-action.ts";
import { reviewAttributes } from "./review-attributes.ts";

const KIND = "SelfSubjectAccessReview";
const DESCRIPTION = "SelfSubjectAccessReview checks whether or the current user can perform an action.";

const schema = {
  spec: object(
    {
      resourceAttributes: object(
        {
          namespace: string('Namespace of the action; "" means all namespaces (or a cluster-scoped resource).'),
          verb: string(
            'A kubernetes resource API verb, like: get, list, watch, create, update, delete, proxy. "*" means all.',
          ),
          group: string('The API Group of the Resource. "*" means all.'),
          version: string('The API Version of the Resource. "*" means all.'),
          resource: string('One of the existing resource types. "*" means all.'),
          subresource: string('One of the existing resource types. "" means none.'),
          name: string('The name of the resource being requested for a "get" or deleted for a "delete". "" means all.'),
        },
        "The information for a resource access request.",
      ),
      nonResourceAttributes: object(
        {
          path: string("The URL path of the request."),
          verb: string("The standard HTTP verb."),
        },
        "The information for a non-resource access request.",
      ),
    },
    "Spec holds information about the request being evaluated. Exactly one of resourceAttributes and nonResourceAttributes must be set.",
  ),
  status: object(
    {
      allowed: boolean("Allowed is required. True if the action would be allowed, false otherwise."),
      denied: boolean("Denied is optional. True if the action would be denied, otherwise false."),
      reason: string("Reason is optional. It indicates why a request was allowed or denied."),
      evaluationError: string("An indication that some error occurred during the authorization check."),
    },
    "Status is filled in by the server and indicates whether the request is allowed or not.",
  ),
};

export interface SelfSubjectAccessReviewServing {
  group: string;
  version: string;
  /** The upstream message, where kubectl may send protobuf (the built-in group only). */
  protobuf?: { message: string };
}

/** The review served at `<group>/<version>/selfsubjectaccessreviews`. */
export function createSelfSubjectAccessReviewDefinition(serving: SelfSubjectAccessReviewServing): ResourceDefinition {
  const { group, version } = serving;
  const definition: ResourceDefinition = {
    group,
    version,
    kind: KIND,
    plural: "selfsubjectaccessreviews",
    singular: "selfsubjectaccessreview",
    namespaced: false,
    description: DESCRIPTION,
    schema,
    strategy: {},
    action: reviewAction({
      apiVersion: `${group}/${version}`,
      kind: KIND,
      description: DESCRIPTION,
      schema,
      async status(context, spec) {
        const decision = await context.authorizer.authorize(
          reviewAttributes(spec, context.user, { group, kind: KIND }),
        );
        // The authorizer has the last word (no other one is asked after it), so a refusal is a denial.
        const status: Static<typeof schema.status> = decision.allowed
          ? { allowed: true }
          : { allowed: false, denied: true };
        if (decision.reason) status.reason = decision.reason;
        return status;
      },
    }),
  };
  if (serving.protobuf) definition.protobuf = serving.protobuf;
  return definition;
}

/** authorization.k8s.io/v1, as the cluster API server serves it. */
export const selfSubjectAccessReviewDefinition: ResourceDefinition = createSelfSubjectAccessReviewDefinition({
  group: "authorization.k8s.io",
  version: "v1",
  protobuf: { message: "k8s.io.api.authorization.v1.SelfSubjectAccessReview" },
});
