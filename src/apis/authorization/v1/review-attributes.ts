// What a SelfSubjectAccessReview asks, as the authorizer's attributes. Upstream's check on the spec (exactly one of
// resourceAttributes and nonResourceAttributes, with its messages), plus the fields without which there is no
// question to answer (verb and resource; verb and path), all reported in one 422.

import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { type GroupKind, isPlainObject, type JsonMap } from "../../../apimachinery/types.ts";
import type { AuthorizationAttributes, UserInfo } from "../../../registry/types.ts";

/** Set on the attributes only when the review names them: kubectl sends them empty. */
const OPTIONAL_FIELDS = ["namespace", "group", "version", "subresource", "name"] as const;

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** The attributes to authorize for a review's `spec`, or a 422 Invalid naming `kind`. */
export function reviewAttributes(spec: JsonMap, user: UserInfo, kind: GroupKind): AuthorizationAttributes {
  const resource = isPlainObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const nonResource = isPlainObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  const problems: FieldError[] = [];
  const required = (value: string, field: string): string => {
    if (!value) problems.push(fieldError.required(field));
    return value;
  };
  let attributes: AuthorizationAttributes | undefined;
  if (resource) {
    if (nonResource) {
      const detail = "cannot be specified in combination with resourceAttributes";
      problems.push(fieldError.invalid("spec.nonResourceAttributes", nonResource, detail));
    }
    attributes = {
      user,
      resourceRequest: true,
      verb: required(text(resource.verb), "spec.resourceAttributes.verb"),
      resource: required(text(resource.resource), "spec.resourceAttributes.resource"),
      group: "",
    };
    for (const field of OPTIONAL_FIELDS) {
      const value = text(resource[field]);
      if (value) attributes[field] = value;
    }
  } else if (nonResource) {
    attributes = {
      user,
      resourceRequest: false,
      verb: required(text(nonResource.verb), "spec.nonResourceAttributes.verb"),
      path: required(text(nonResource.path), "spec.nonResourceAttributes.path"),
    };
  } else {
    const detail = "exactly one of nonResourceAttributes or resourceAttributes must be specified";
    problems.push(fieldError.invalid("spec.resourceAttributes", null, detail));
  }
  if (!attributes || problems.length > 0) throw errors.invalid(kind, "", problems);
  return attributes;
}
