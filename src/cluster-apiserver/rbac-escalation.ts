// RBAC escalation prevention, as kube-apiserver's RBAC storage does it: a caller may write a (Cluster)Role only with
// permissions it holds itself (or with the `escalate` verb on that role), and a (Cluster)RoleBinding only to a role
// whose permissions it holds (or with the `bind` verb on that role). "Holds" is asked of the authorizer, permission
// by permission, in the scope the object grants in; a wildcard is held only through the same wildcard.

import { errors } from "../apimachinery/errors.ts";
import type { BindingObject, PolicyRule, RoleObject } from "../apis/rbac/v1/common.ts";
import { RBAC_GROUP } from "../apis/rbac/v1/common.ts";
import type { AuthorizationAttributes, RequestContext, ResourceDefinition } from "../registry/types.ts";

/** The rules of the role a binding names (from the RBAC index); undefined when there is no such role. */
export type RoleRules = (kind: string, name: string, namespace: string) => PolicyRule[] | undefined;

const atMost = (values: string[] | undefined) => (values?.length ? values : [""]);

/** Every single permission a rule grants, as authorization questions in `namespace` ("" = cluster-wide). */
function permissions(rule: PolicyRule, namespace: string, user: RequestContext["user"]): AuthorizationAttributes[] {
  const asked: AuthorizationAttributes[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const path of rule.nonResourceURLs ?? []) asked.push({ user, verb, path, resourceRequest: false });
    for (const group of rule.apiGroups ?? []) {
      for (const combined of rule.resources ?? []) {
        const [resource, subresource] = combined.split("/", 2);
        for (const name of atMost(rule.resourceNames)) {
          const attributes: AuthorizationAttributes = { user, verb, group, resource, resourceRequest: true };
          if (subresource) attributes.subresource = subresource;
          if (namespace) attributes.namespace = namespace;
          if (name) attributes.name = name;
          asked.push(attributes);
        }
      }
    }
  }
  return asked;
}

function describeRule(rule: PolicyRule): string {
  const parts: string[] = [];
  const list = (name: string, values: string[] | undefined) => {
    if (values?.length) parts.push(`${name}:[${values.map((v) => JSON.stringify(v)).join(", ")}]`);
  };
  list("APIGroups", rule.apiGroups);
  list("Resources", rule.resources);
  list("ResourceNames", rule.resourceNames);
  list("NonResourceURLs", rule.nonResourceURLs);
  list("Verbs", rule.verbs);
  return `{${parts.join(", ")}}`;
}

async function missingRules(context: RequestContext, rules: PolicyRule[], namespace: string): Promise<PolicyRule[]> {
  const missing: PolicyRule[] = [];
  for (const rule of rules) {
    for (const question of permissions(rule, namespace, context.user)) {
      if (!(await context.authorizer.authorize(question)).allowed) {
        missing.push(rule);
        break;
      }
    }
  }
  return missing;
}

/** Whether the caller may use `verb` (escalate, bind) on the named role: then it may grant what the role holds. */
async function mayUse(context: RequestContext, verb: string, kind: string, name: string, namespace: string) {
  const attributes: AuthorizationAttributes = {
    user: context.user,
    verb,
    group: RBAC_GROUP,
    resource: kind === "Role" ? "roles" : "clusterroles",
    name,
    resourceRequest: true,
  };
  if (namespace) attributes.namespace = namespace;
  return (await context.authorizer.authorize(attributes)).allowed;
}

function refuse(definition: ResourceDefinition, name: string, context: RequestContext, missing: PolicyRule[]): never {
  const groups = context.user.groups.map((g) => JSON.stringify(g)).join(" ");
  throw errors.forbidden(
    { group: definition.group, resource: definition.plural },
    name,
    `user ${JSON.stringify(context.user.name)} (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${missing.map(describeRule).join("\n")}`,
  );
}

/** Wraps the RBAC kinds' prepare hooks with the escalation checks; other definitions are returned unchanged. */
export function withEscalationChecks<T extends ResourceDefinition>(definition: T, roleRules: RoleRules): T {
  if (definition.group !== RBAC_GROUP) return definition;
  const isRole = definition.kind === "Role" || definition.kind === "ClusterRole";
  const isBinding = definition.kind === "RoleBinding" || definition.kind === "ClusterRoleBinding";
  if (!isRole && !isBinding) return definition;
  const strategy = definition.strategy;

  const check = async (object: RoleObject | BindingObject, context: RequestContext) => {
    const namespace = object.metadata.namespace ?? "";
    const name = object.metadata.name ?? object.metadata.generateName ?? "";
    if (isRole) {
      if (await mayUse(context, "escalate", definition.kind, name, namespace)) return;
      const missing = await missingRules(context, (object as RoleObject).rules ?? [], namespace);
      if (missing.length) refuse(definition, name, context, missing);
      return;
    }
    const ref = (object as BindingObject).roleRef;
    if (!ref?.name) return; // validation reports it
    if (await mayUse(context, "bind", ref.kind, ref.name, namespace)) return;
    const rules = roleRules(ref.kind, ref.name, namespace);
    if (!rules) {
      throw errors.forbidden(
        { group: definition.group, resource: definition.plural },
        name,
        `${ref.kind === "Role" ? "roles" : "clusterroles"}.${RBAC_GROUP} ${JSON.stringify(ref.name)} not found: binding a role that does not exist needs the bind verb on it`,
      );
    }
    const missing = await missingRules(context, rules, namespace);
    if (missing.length) refuse(definition, name, context, missing);
  };

  return {
    ...definition,
    strategy: {
      ...strategy,
      async prepareForCreate(object, context) {
        await strategy.prepareForCreate?.call(strategy, object, context);
        await check(object as RoleObject | BindingObject, context);
      },
      async prepareForUpdate(object, old, context) {
        await strategy.prepareForUpdate?.call(strategy, object, old, context);
        await check(object as RoleObject | BindingObject, context);
      },
    },
  };
}
