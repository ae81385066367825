// Shapes and checks shared by the rbac.authorization.k8s.io/v1 kinds (pkg/apis/rbac/validation, with upstream's
// wording).

import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import { validateDns1123Subdomain } from "../../../apimachinery/names.ts";
import {
  array,
  type KindOf,
  object,
  openObject,
  type Static,
  string,
  stringList,
} from "../../../apimachinery/schema-builders.ts";
import { goStrings } from "../../core/v1/validation.ts";

export const RBAC_GROUP = "rbac.authorization.k8s.io";
export const RBAC_VERSION = "v1";

export const policyRulesSchema = array(
  object(
    {
      verbs: stringList(
        "Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule. '*' represents all verbs.",
      ),
      apiGroups: stringList(
        'APIGroups is the name of the APIGroup that contains the resources. "" represents the core API group and "*" represents all API groups.',
      ),
      resources: stringList("Resources is a list of resources this rule applies to. '*' represents all resources."),
      resourceNames: stringList("ResourceNames is an optional white list of names that the rule applies to."),
      nonResourceURLs: stringList(
        'NonResourceURLs is a set of partial urls that a user should have access to. *s are allowed, but only as the full, final step in the path. Rules can either apply to API resources (such as "pods" or "secrets") or non-resource URL paths (such as "/api"), but not both.',
      ),
    },
    "PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.",
    ["verbs"],
  ),
  "Rules holds all the PolicyRules for this Role",
);

export const subjectsSchema = array(
  object(
    {
      kind: string('Kind of object being referenced: "User", "Group" or "ServiceAccount".'),
      apiGroup: string(
        'APIGroup holds the API group of the referenced subject. Defaults to "" for ServiceAccount subjects and "rbac.authorization.k8s.io" for User and Group subjects.',
      ),
      name: string("Name of the object being referenced."),
      namespace: string("Namespace of the referenced object (ServiceAccount subjects)."),
    },
    "Subject contains a reference to the object or user identities a role binding applies to.",
    ["kind", "name"],
  ),
  "Subjects holds references to the objects the role applies to.",
);

export const roleRefSchema = (description: string) =>
  object(
    {
      apiGroup: string("APIGroup is the group for the resource being referenced."),
      kind: string("Kind is the type of resource being referenced."),
      name: string("Name is the name of resource being referenced."),
    },
    description,
    ["apiGroup", "kind", "name"],
  );

export const aggregationRuleSchema = object(
  {
    clusterRoleSelectors: array(
      openObject("A label selector."),
      "ClusterRoleSelectors holds a list of selectors which will be used to find ClusterRoles and create the rules.",
    ),
  },
  "AggregationRule is an optional field that describes how to build the Rules for this ClusterRole.",
);

/** The fields of a Role and a ClusterRole (only a ClusterRole has aggregationRule). */
export const roleSchema = { rules: policyRulesSchema, aggregationRule: aggregationRuleSchema };

/** The fields of a RoleBinding and a ClusterRoleBinding: roleRef's description says what it may reference. */
export const bindingSchema = (roleRefDescription: string) => ({
  subjects: subjectsSchema,
  roleRef: roleRefSchema(roleRefDescription),
});

export type PolicyRule = Static<typeof policyRulesSchema>[number];
export type Subject = Static<typeof subjectsSchema>[number];
export type RoleRef = Static<ReturnType<typeof roleRefSchema>>;
export type RoleObject = KindOf<typeof roleSchema>;
export type BindingObject = KindOf<ReturnType<typeof bindingSchema>>;

export function validatePolicyRules(rules: PolicyRule[] | undefined, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  (rules ?? []).forEach((rule, i) => {
    const path = `rules[${i}]`;
    if (!rule.verbs?.length) errs.push(fieldError.required(`${path}.verbs`, "verbs must contain at least one value"));
    const urls = rule.nonResourceURLs ?? [];
    if (urls.length > 0) {
      const invalid = (detail: string): FieldError => ({
        type: "FieldValueInvalid",
        field: `${path}.nonResourceURLs`,
        badValueText: goStrings(urls),
        detail,
      });
      if (namespaced) errs.push(invalid("namespaced rules cannot apply to non-resource URLs"));
      if (rule.apiGroups?.length || rule.resources?.length || rule.resourceNames?.length) {
        errs.push(invalid("rules cannot apply to both regular resources and non-resource URLs"));
      }
      return;
    }
    if (!rule.apiGroups?.length) {
      errs.push(fieldError.required(`${path}.apiGroups`, "resource rules must supply at least one api group"));
    }
    if (!rule.resources?.length) {
      errs.push(fieldError.required(`${path}.resources`, "resource rules must supply at least one resource"));
    }
  });
  return errs;
}

/** Subject defaults (SetDefaults_Subject) and the roleRef's group. */
export function defaultBinding(binding: BindingObject): void {
  for (const subject of binding.subjects ?? []) {
    if (subject.apiGroup === undefined || subject.apiGroup === "") {
      subject.apiGroup = subject.kind === "User" || subject.kind === "Group" ? RBAC_GROUP : "";
    }
  }
  if (binding.roleRef && !binding.roleRef.apiGroup) binding.roleRef.apiGroup = RBAC_GROUP;
}

export function validateBinding(
  binding: BindingObject,
  roleKinds: readonly string[],
  namespaced: boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  const ref = binding.roleRef ?? { apiGroup: "", kind: "", name: "" };
  if (ref.apiGroup !== RBAC_GROUP) errs.push(fieldError.notSupported("roleRef.apiGroup", ref.apiGroup, [RBAC_GROUP]));
  if (!roleKinds.includes(ref.kind)) errs.push(fieldError.notSupported("roleRef.kind", ref.kind, roleKinds));
  if (!ref.name) errs.push(fieldError.required("roleRef.name"));
  else if (ref.name.includes("/") || ref.name.includes("%") || ref.name === "." || ref.name === "..") {
    errs.push(fieldError.invalid("roleRef.name", ref.name, "may not contain '/' or '%', and may not be '.' or '..'"));
  }
  (binding.subjects ?? []).forEach((subject, i) => {
    const path = `subjects[${i}]`;
    if (!subject.name) errs.push(fieldError.required(`${path}.name`));
    switch (subject.kind) {
      case "ServiceAccount":
        if (subject.name) {
          for (const detail of validateDns1123Subdomain(subject.name)) {
            errs.push(fieldError.invalid(`${path}.name`, subject.name, detail));
          }
        }
        if (subject.apiGroup) errs.push(fieldError.notSupported(`${path}.apiGroup`, subject.apiGroup, [""]));
        if (!namespaced && !subject.namespace) errs.push(fieldError.required(`${path}.namespace`));
        break;
      case "User":
      case "Group":
        if (subject.apiGroup !== RBAC_GROUP) {
          errs.push(fieldError.notSupported(`${path}.apiGroup`, subject.apiGroup ?? "", [RBAC_GROUP]));
        }
        break;
      default:
        errs.push(fieldError.notSupported(`${path}.kind`, subject.kind, ["ServiceAccount", "User", "Group"]));
    }
  });
  return errs;
}

export function validateRoleRefUpdate(binding: BindingObject, old: BindingObject): FieldError[] {
  const a: Partial<RoleRef> = binding.roleRef ?? {};
  const b: Partial<RoleRef> = old.roleRef ?? {};
  if (a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name) return [];
  return [
    {
      type: "FieldValueInvalid",
      field: "roleRef",
      badValueText: `rbac.RoleRef{APIGroup:${JSON.stringify(a.apiGroup ?? "")}, Kind:${JSON.stringify(a.kind ?? "")}, Name:${JSON.stringify(a.name ?? "")}}`,
      detail: "cannot change roleRef",
    },
  ];
}

/** kubectl's wide columns of a binding: who it binds. */
export function subjectNames(binding: BindingObject, kind: string): string[] {
  return (binding.subjects ?? [])
    .filter((s) => s.kind === kind)
    .map((s) => (kind === "ServiceAccount" ? `${s.namespace ?? binding.metadata.namespace ?? ""}/${s.name}` : s.name));
}
