// SelfSubjectRulesReview (POST answers 201): what may the caller do in a namespace? `kubectl auth can-i --list`
// uses it. The answer is the server authorizer's own list (Authorizer.rulesFor), so a rule listed here is a rule
// the same authorizer allows; an authorizer that cannot list rules answers an empty list marked incomplete.
// Served in authorization.k8s.io/v1 by the platform and by the cluster API server.

import { errors } from "../../../apimachinery/errors.ts";
import { array, boolean, object, string, stringList } from "../../../apimachinery/schema-builders.ts";
import type { JsonMap } from "../../../apimachinery/types.ts";
import type { ResourceDefinition, SubjectRules } from "../../../registry/types.ts";
import { reviewAction } from "./review-action.ts";

const KIND = "SelfSubjectRulesReview";
const DESCRIPTION =
  "SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace. Every rule listed is allowed; the list may be incomplete.";
const CANNOT_LIST = "this server's authorizer cannot list rules";

const schema: JsonMap = {
  spec: object(
    { namespace: string("Namespace to evaluate rules for. Required.") },
    "Spec holds information about the request being evaluated.",
  ),
  status: object(
    {
      resourceRules: array(
        object(
          {
            verbs: stringList('Verbs, like get, list, watch, create, update, delete. "*" means all.'),
            apiGroups: stringList('The API groups of the resources. "*" means all.'),
            resources: stringList('Resources, "resource/subresource" for a subresource. "*" means all.'),
            resourceNames: stringList("Names the rule is limited to. Empty means every name."),
          },
          "The actions the subject may perform on resources.",
        ),
        "The actions the subject may perform on resources.",
      ),
      nonResourceRules: array(
        object(
          {
            verbs: stringList('Verbs, like get, post, put, delete. "*" means all.'),
            nonResourceURLs: stringList('URL paths; a final "*" covers everything below. "*" means all.'),
          },
          "The actions the subject may perform on non-resource URLs.",
        ),
        "The actions the subject may perform on non-resource URLs.",
      ),
      incomplete: boolean("True when the rules returned are incomplete."),
      evaluationError: string("Why the rules may be incomplete."),
    },
    "Status is filled in by the server and lists the actions the user can perform.",
  ),
};

export const selfSubjectRulesReviewDefinition: ResourceDefinition = {
  group: "authorization.k8s.io",
  version: "v1",
  kind: KIND,
  plural: "selfsubjectrulesreviews",
  singular: "selfsubjectrulesreview",
  namespaced: false,
  description: DESCRIPTION,
  schema,
  strategy: {},
  protobuf: { message: "k8s.io.api.authorization.v1.SelfSubjectRulesReview" },
  action: reviewAction({
    apiVersion: "authorization.k8s.io/v1",
    kind: KIND,
    description: DESCRIPTION,
    schema,
    async status(context, spec) {
      const namespace = typeof spec.namespace === "string" ? spec.namespace : "";
      // As upstream: the namespace is required (kubectl sends its current one, "default" when none is set).
      if (!namespace) throw errors.badRequest("no namespace on request: set spec.namespace (kubectl: -n NAMESPACE)");
      const rules: SubjectRules = context.authorizer.rulesFor
        ? await context.authorizer.rulesFor(context.user, namespace)
        : { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: CANNOT_LIST };
      const status: JsonMap = {
        resourceRules: rules.resourceRules as unknown as JsonMap[],
        nonResourceRules: rules.nonResourceRules as unknown as JsonMap[],
        incomplete: rules.incomplete,
      };
      if (rules.evaluationError) status.evaluationError = rules.evaluationError;
      return status;
    },
  }),
};
