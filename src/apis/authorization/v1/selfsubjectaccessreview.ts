// SelfSubjectAccessReview (authorization.k8s.io/v1, POST answers 201): may the caller do a verb on a resource or a
// non-resource path? Answered by the authorizer that guards the caller's own requests. `kubectl auth can-i` uses it.

import { errors } from "../../../apimachinery/errors.ts";
import { fieldError } from "../../../apimachinery/field-errors.ts";
import { boolean, object, string } from "../../../apimachinery/schema-builders.ts";
import { isPlainObject, type JsonMap, type KubeObject } from "../../../apimachinery/types.ts";
import type { AuthorizationAttributes, ResourceDefinition } from "../../../registry/types.ts";

const GROUP = "authorization.k8s.io";
const VERSION = "v1";
const KIND = "SelfSubjectAccessReview";
const GROUP_KIND = { group: GROUP, kind: KIND };
const RESOURCE_FIELDS = ["namespace", "group", "version", "subresource", "name"] as const;

const schema: JsonMap = {
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

const text = (value: unknown): string => (typeof value === "string" ? value : "");

function attributesOf(spec: JsonMap, user: AuthorizationAttributes["user"]): AuthorizationAttributes {
  const resource = isPlainObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const nonResource = isPlainObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  if (Boolean(resource) === Boolean(nonResource)) {
    throw errors.invalid(GROUP_KIND, "", [
      fieldError.invalid(
        "spec.resourceAttributes",
        null,
        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
      ),
    ]);
  }
  if (nonResource) {
    return { user, resourceRequest: false, verb: text(nonResource.verb), path: text(nonResource.path) };
  }
  const attributes: AuthorizationAttributes = {
    user,
    resourceRequest: true,
    verb: text(resource?.verb),
    resource: text(resource?.resource),
    group: text(resource?.group),
  };
  for (const field of RESOURCE_FIELDS) {
    const value = text(resource?.[field]);
    if (value) attributes[field] = value;
  }
  return attributes;
}

export const selfSubjectAccessReviewDefinition: ResourceDefinition = {
  group: GROUP,
  version: VERSION,
  kind: KIND,
  plural: "selfsubjectaccessreviews",
  singular: "selfsubjectaccessreview",
  namespaced: false,
  description: "SelfSubjectAccessReview checks whether or the current user can perform an action.",
  schema,
  strategy: {},
  protobuf: { message: "k8s.io.api.authorization.v1.SelfSubjectAccessReview" },
  action: {
    kind: KIND,
    description: "SelfSubjectAccessReview checks whether or the current user can perform an action.",
    schema,
    verbs: ["create"],
    async handle({ context, body }) {
      const spec = isPlainObject(body) && isPlainObject(body.spec) ? body.spec : {};
      const decision = await context.authorizer.authorize(attributesOf(spec, context.user));
      const status: JsonMap = { allowed: decision.allowed };
      if (decision.reason) status.reason = decision.reason;
      const response: KubeObject = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: KIND,
        metadata: { creationTimestamp: null },
        spec,
        status,
      };
      return response;
    },
  },
};
