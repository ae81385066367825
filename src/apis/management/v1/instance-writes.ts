// What the writers of a VirtualClusterInstance may change, beyond the verbs the authorizer allows them; in the spirit
// of Kubernetes' NodeRestriction admission, which holds a kubelet to its own Node:
//  - a runtime (an access key with the role virtualcluster) registers instances and reports their status. On an
//    instance it may write (the authorizer holds it to the ones it reports for, spec.runtime), an update may only
//    fill in registration fields that are still empty (external, clusterRef, the ingress access point): never change
//    one, nor any other field, label or annotation. Registering binds the new instance to the key's owner.
//  - the access point (spec.template.accessPoint.ingress: where kubeconfigs send their credentials), once set, changes
//    only for callers allowed `update` on `virtualclusterinstances/accesspoint`: the project's admins and owner, the
//    instance's owner, platform admins. Setting one where none is set is registering it, open to every writer.

import { isDeepStrictEqual } from "node:util";
import { errors } from "../../../apimachinery/errors.ts";
import type { RequestContext } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";
import type { RuntimeOwner, VirtualClusterInstance } from "./virtualclusterinstance-schema.ts";

/** A caller of an instance write, as the identity layer sees it. */
export interface InstanceCaller {
  /** The user or team the caller acts for (a team's own key: the team). */
  subject?: RuntimeOwner;
  /** Whether the caller is a virtual cluster runtime: its access key carries the role virtualcluster. */
  runtime: boolean;
}

/** Describes the caller of a request; undefined for the platform's own work. */
export type InstanceCallers = (context: RequestContext) => InstanceCaller | undefined;

const RESOURCE = { group: GROUP, resource: "virtualclusterinstances" };
/** The pseudo-subresource whose `update` right lets a caller move an instance's access point. */
export const ACCESS_POINT_SUBRESOURCE = "accesspoint";

const INGRESS = "spec.template.accessPoint.ingress";
const ACCESS_POINT_FIELDS = [`${INGRESS}.enabled`, `${INGRESS}.host`];
/** What a runtime's registration reports; a runtime may set these while they are empty. */
const REGISTRATION_FIELDS = [
  "spec.external",
  "spec.clusterRef.namespace",
  "spec.clusterRef.virtualCluster",
  ...ACCESS_POINT_FIELDS,
];
const RUNTIME_FIXED_METADATA = ["labels", "annotations", "finalizers", "ownerReferences"] as const;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Absent, empty and false are "not set". */
const isSet = (value: unknown) => value !== undefined && value !== null && value !== "" && value !== false;

function valueAt(object: unknown, path: string): unknown {
  let value = object;
  for (const segment of path.split(".")) value = isRecord(value) ? value[segment] : undefined;
  return value;
}

/**
 * Dotted paths of the leaves that differ between two specs. An object on one side only is compared with an empty
 * one, so filling in a whole ingress names its fields. The schema bounds a spec's depth; so does the nesting limit.
 */
function changedPaths(before: unknown, after: unknown, path: string, out: string[]): string[] {
  if (isDeepStrictEqual(before, after)) return out;
  if (isRecord(before) || isRecord(after)) {
    const a = isRecord(before) ? before : before === undefined ? {} : undefined;
    const b = isRecord(after) ? after : after === undefined ? {} : undefined;
    if (a && b) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
        changedPaths(a[key], b[key], `${path}.${key}`, out);
      return out;
    }
  }
  out.push(path);
  return out;
}

function refuse(instance: VirtualClusterInstance, reason: string): never {
  throw errors.forbidden(RESOURCE, instance.metadata.name ?? "", reason);
}

/** A runtime registering: the instance reports through the key's owner, whatever the body said. */
export function bindRegisteringRuntime(instance: VirtualClusterInstance, caller: InstanceCaller | undefined): void {
  if (caller?.runtime) {
    if (!caller.subject) {
      refuse(
        instance,
        'an access key with the role "virtualcluster" registers instances only when it belongs to a user or team',
      );
    }
    instance.spec = { ...instance.spec, runtime: { ...caller.subject } };
  } else if (!instance.spec?.runtime && caller?.subject) {
    // Made by a person: that person's runtime keys report for it (`virtualcluster create` makes one of those).
    instance.spec = { ...instance.spec, runtime: { ...caller.subject } };
  }
}

/** Refuses what `caller` may not change from `old` to `next` (403 naming the field); see the top of the file. */
export async function checkInstanceWrite(
  next: VirtualClusterInstance,
  old: VirtualClusterInstance,
  caller: InstanceCaller | undefined,
  context: RequestContext,
): Promise<void> {
  const changed = changedPaths(old.spec, next.spec, "spec", []);
  if (caller?.runtime) {
    for (const path of changed) {
      if (REGISTRATION_FIELDS.includes(path) && !isSet(valueAt(old, path))) continue;
      const why = REGISTRATION_FIELDS.includes(path)
        ? `${path} is set already, and only the project's owners and admins change it`
        : `${path} is written by the project's members, not by a runtime`;
      refuse(
        next,
        `an access key with the role "virtualcluster" writes its instance's status and fills in what registration left empty: ${why}`,
      );
    }
    for (const field of RUNTIME_FIXED_METADATA) {
      if (!isDeepStrictEqual(next.metadata[field], old.metadata[field])) {
        refuse(next, `an access key with the role "virtualcluster" does not change metadata.${field}`);
      }
    }
    return;
  }
  const moved = changed.filter((path) => ACCESS_POINT_FIELDS.includes(path) && isSet(valueAt(old, path)));
  if (moved.length === 0) return;
  const { namespace, name = "" } = old.metadata;
  const decision = await context.authorizer.authorize({
    user: context.user,
    verb: "update",
    group: GROUP,
    version: VERSION,
    resource: RESOURCE.resource,
    subresource: ACCESS_POINT_SUBRESOURCE,
    namespace,
    name,
    resourceRequest: true,
  });
  if (decision.allowed) return;
  refuse(
    next,
    `User "${context.user.name}" cannot change ${moved.join(", ")}: kubeconfigs of the instance send their credentials there, so once set it is changed only by the project's owners and admins (update on virtualclusterinstances/${ACCESS_POINT_SUBRESOURCE})`,
  );
}
