// Builds authorization attributes from the request info and turns a denial into apiserver's 403 wording:
// `users.management.platform.sh "x" is forbidden: User "bob" cannot get resource "users" in API group
// "management.platform.sh" at the cluster scope[: <reason>]`.

import { errors } from "../apimachinery/errors.ts";
import { type FieldRequirement, parseFieldSelector } from "../apimachinery/field-selector.ts";
import type { AuthorizationAttributes, Authorizer, UserInfo } from "../registry/types.ts";
import { type Query, queryValue } from "./query-options.ts";
import type { RequestInfo } from "./request-info.ts";

/**
 * The object a list/watch narrows to with `fieldSelector=metadata.name=X`, as upstream reports it for authz. Read with
 * the same parser the list uses; a selector that does not parse names nothing here (the list answers its 400).
 */
function selectorName(query: Query): string {
  const selector = queryValue(query, "fieldSelector");
  if (!selector) return "";
  let requirements: FieldRequirement[];
  try {
    requirements = parseFieldSelector(selector).requirements;
  } catch {
    return "";
  }
  const names = new Set(
    requirements.filter((r) => r.field === "metadata.name" && r.operator === "=").map((r) => r.value),
  );
  const [found] = names;
  return names.size === 1 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(found) ? found : "";
}

export function authorizationAttributes(info: RequestInfo, user: UserInfo, query: Query): AuthorizationAttributes {
  if (!info.resourceRequest) return { user, verb: info.verb, path: info.path, resourceRequest: false };
  let name = info.name;
  if (!name && (info.verb === "list" || info.verb === "watch")) name = selectorName(query);
  const attributes: AuthorizationAttributes = {
    user,
    verb: info.verb,
    group: info.group,
    version: info.version,
    resource: info.resource,
    resourceRequest: true,
  };
  if (info.subresource) attributes.subresource = info.subresource;
  if (info.namespace) attributes.namespace = info.namespace;
  if (name) attributes.name = name;
  return attributes;
}

export function forbiddenMessage(attributes: AuthorizationAttributes): string {
  const user = attributes.user.name;
  if (!attributes.resourceRequest) return `User "${user}" cannot ${attributes.verb} path "${attributes.path}"`;
  const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  const scope = attributes.namespace ? `in the namespace "${attributes.namespace}"` : "at the cluster scope";
  return `User "${user}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.group}" ${scope}`;
}

/** Asks the authorizer; throws the upstream-worded 403 when denied. */
export async function authorizeRequest(
  authorizer: Authorizer,
  info: RequestInfo,
  user: UserInfo,
  query: Query,
): Promise<void> {
  await authorizeAttributes(authorizer, authorizationAttributes(info, user, query));
}

/** Asks the authorizer about `attributes` (a request's, or one it implies, as impersonation); 403 when denied. */
export async function authorizeAttributes(authorizer: Authorizer, attributes: AuthorizationAttributes): Promise<void> {
  const decision = await authorizer.authorize(attributes);
  if (decision.allowed) return;
  const message = forbiddenMessage(attributes);
  const text = decision.reason ? `${message}: ${decision.reason}` : message;
  if (!attributes.resourceRequest) throw errors.forbiddenPath(`forbidden: ${text}`);
  throw errors.forbidden(
    { group: attributes.group ?? "", resource: attributes.resource ?? "" },
    attributes.name ?? "",
    text,
  );
}
