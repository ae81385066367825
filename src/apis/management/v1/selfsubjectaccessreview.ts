// SelfSubjectAccessReview (POST, 201): may the caller do a verb on a resource (or a non-resource path)? Answered by
// the same authorizer that guards the caller's requests, access-key scope included.

import { errors } from "../../../apimachinery/errors.ts";
import { fieldError } from "../../../apimachinery/field-errors.ts";
import { boolean, object, string } from "../../../apimachinery/schema-builders.ts";
import { isPlainObject, type KubeObject } from "../../../apimachinery/types.ts";
import type { AuthorizationAttributes, ResourceDefinition } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";

const KIND = "SelfSubjectAccessReview";
const FIELDS = ["namespace", "verb", "group", "version", "resource", "subresource", "name"] as const;

const schema = {
  spec: object(
    {
      resourceAttributes: object(
        {
          namespace: string('Namespace of the request; "" for cluster-scoped resources or all namespaces.'),
          verb: string("Verb: get, list, watch, create, update, patch, delete, deletecollection, bind, makeowner..."),
          group: string("API group."),
          version: string("API version."),
          resource: string("Resource (plural)."),
          subresource: string("Subresource."),
          name: string("Object name; empty for all."),
        },
        "A resource request.",
      ),
      nonResourceAttributes: object(
        { path: string("URL path."), verb: string("Lower-case HTTP method.") },
        "A non-resource request.",
      ),
    },
    "The request to check. Exactly one of resourceAttributes and nonResourceAttributes.",
  ),
  status: object(
    {
      allowed: boolean("Whether the request would be allowed."),
      denied: boolean("Whether the request would be denied."),
      reason: string("Why not, when denied."),
    },
    "The answer.",
  ),
};

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

export const selfSubjectAccessReviewDefinition: ResourceDefinition = {
  group: GROUP,
  version: VERSION,
  kind: KIND,
  plural: "selfsubjectaccessreviews",
  singular: "selfsubjectaccessreview",
  namespaced: false,
  description: "SelfSubjectAccessReview checks whether the caller may perform an action.",
  schema,
  strategy: {},
  action: {
    kind: KIND,
    description: "SelfSubjectAccessReview checks whether the caller may perform an action.",
    schema,
    verbs: ["create"],
    async handle({ context, body }) {
      const spec = isPlainObject(body) && isPlainObject(body.spec) ? body.spec : {};
      const resource = isPlainObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
      const nonResource = isPlainObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
      if (Boolean(resource) === Boolean(nonResource)) {
        throw errors.invalid({ group: GROUP, kind: KIND }, "", [
          fieldError.required("spec", "exactly one of resourceAttributes and nonResourceAttributes is required"),
        ]);
      }
      let attributes: AuthorizationAttributes;
      if (resource) {
        const values: Record<string, string | undefined> = {};
        for (const field of FIELDS) values[field] = text(resource[field]);
        if (!values.verb || !values.resource) {
          throw errors.invalid({ group: GROUP, kind: KIND }, "", [
            fieldError.required(values.verb ? "spec.resourceAttributes.resource" : "spec.resourceAttributes.verb"),
          ]);
        }
        attributes = { user: context.user, resourceRequest: true, verb: values.verb, resource: values.resource };
        for (const field of ["namespace", "group", "version", "subresource", "name"] as const) {
          if (values[field]) attributes[field] = values[field];
        }
        attributes.group ??= "";
      } else {
        const path = text(nonResource?.path);
        const verb = text(nonResource?.verb);
        if (!path || !verb)
          throw errors.invalid({ group: GROUP, kind: KIND }, "", [fieldError.required("spec.nonResourceAttributes")]);
        attributes = { user: context.user, resourceRequest: false, verb, path };
      }
      const decision = await context.authorizer.authorize(attributes);
      const response: KubeObject = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: KIND,
        metadata: {},
        spec,
        status: decision.allowed ? { allowed: true } : { allowed: false, denied: true, reason: decision.reason ?? "" },
      };
      return response;
    },
  },
};
