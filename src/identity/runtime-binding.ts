// A virtual cluster runtime writes only the instances it reports for. A runtime is a caller whose access key carries
// the role virtualcluster; its identity is the key's owner (a user or team), not the key itself, so a key rotated by
// the same owner (a new key in the Secret) keeps reporting, while a key of anyone else, such as the shared key of
// the README, cannot touch an instance another owner's runtime registered. The instance names its runtime owner in
// spec.runtime, set when it is registered (instance-writes.ts) and indexed with its owner and access rules.

import { GROUP } from "../apis/management/v1/common.ts";
import type { InstanceCaller } from "../apis/management/v1/instance-writes.ts";
import { SCOPE_ROLES } from "../apis/management/v1/ownedaccesskey-schema.ts";
import type { RuntimeOwner } from "../apis/management/v1/virtualclusterinstance-schema.ts";
import type { AuthorizationAttributes, AuthorizationDecision, RequestContext } from "../registry/types.ts";
import type { AuthIndex } from "./auth-index.ts";
import { type Principal, principalOf } from "./principal.ts";

export const INSTANCES = "virtualclusterinstances";
const INSTANCE_KEYS = `/${GROUP}/${INSTANCES}/`;

/** Whether the principal's key carries the role virtualcluster: it is a virtual cluster's runtime. */
export function isRuntimeKey(principal: Principal): boolean {
  return (principal.key.scope?.roles ?? []).some((role) => role.role === SCOPE_ROLES.virtualCluster);
}

/** The user or team a principal acts for; undefined for a key with neither (a bare subject). */
export function ownerOf(principal: Principal): RuntimeOwner | undefined {
  if (principal.kind === "User") return { user: principal.name };
  if (principal.kind === "Team") return { team: principal.name };
  return undefined;
}

/** The caller of an instance write, for the instance's own rules. */
export function instanceCaller(context: RequestContext): InstanceCaller | undefined {
  const principal = principalOf(context.user);
  if (!principal) return undefined;
  return { subject: ownerOf(principal), runtime: isRuntimeKey(principal) };
}

const describe = (owner: RuntimeOwner) => (owner.user ? `user "${owner.user}"` : `team "${owner.team}"`);
const same = (a: RuntimeOwner, b: RuntimeOwner) =>
  (a.user ?? "") === (b.user ?? "") && (a.team ?? "") === (b.team ?? "");

/** The instances whose spec.runtime names `owner`, as the index holds them. */
export function* instancesRunBy(index: AuthIndex, owner: RuntimeOwner): Generator<{ namespace: string; name: string }> {
  for (const key of index.accessKeys()) {
    if (!key.startsWith(INSTANCE_KEYS)) continue;
    const runtime = index.accessOf(key)?.runtime;
    if (!runtime || !same(runtime, owner)) continue;
    const [namespace, name] = key.slice(INSTANCE_KEYS.length).split("/");
    if (namespace && name) yield { namespace, name };
  }
}

/** A write to one instance (spec, status, or its audit events), as opposed to registering one or reading. */
function writesInstance(request: AuthorizationAttributes): boolean {
  if (!request.resourceRequest || request.group !== GROUP || request.resource !== INSTANCES || !request.name) {
    return false;
  }
  if (request.subresource === "auditevents") return request.verb === "create";
  if (request.subresource && request.subresource !== "status") return false;
  return request.verb === "update" || request.verb === "patch";
}

/** Undefined when the binding allows the request (or does not concern it); otherwise the denial saying why. */
export function runtimeBindingDenial(
  principal: Principal,
  request: AuthorizationAttributes,
  index: AuthIndex,
): AuthorizationDecision | undefined {
  if (!isRuntimeKey(principal) || !writesInstance(request)) return undefined;
  const instance = `${request.namespace ?? ""}/${request.name}`;
  const bound = index.accessOf(`/${GROUP}/${INSTANCES}/${instance}`)?.runtime;
  const own = ownerOf(principal);
  if (bound && own && same(bound, own)) return undefined;
  const key = own ? `this access key belongs to ${describe(own)}` : "this access key belongs to no user or team";
  const reason = bound
    ? `virtual cluster instance ${instance} reports through the runtime keys of ${describe(bound)} (spec.runtime), and ${key}`
    : `virtual cluster instance ${instance} names no runtime that reports for it (spec.runtime): a platform admin sets it to the owner of the runtime's key`;
  return { allowed: false, reason };
}
