// Permission checks on what a write changes, shared by every resource with access rules, an owner or privileged
// fields: adding a user (or team) to access rules needs `bind` on it, making one the owner needs `makeowner` on it,
// and changing privileged fields (roles, groups, disabling) needs `escalate` on the object itself. The caller's
// authorizer answers; a denial is a 403 worded like the API server's, naming the missing verb.

import { isDeepStrictEqual } from "node:util";
import { errors } from "../../../apimachinery/errors.ts";
import type { GroupResource } from "../../../apimachinery/types.ts";
import type { RequestContext } from "../../../registry/types.ts";
import { GROUP } from "./common.ts";

export interface AccessRule {
  name?: string;
  verbs?: string[];
  subresources?: string[];
  users?: string[];
  teams?: string[];
}

export interface Owner {
  user?: string;
  team?: string;
}

interface Question {
  verb: string;
  resource: string;
  name?: string;
}

/** Asks the caller's authorizer; throws a 403 about `target` when denied. */
async function require(
  context: RequestContext,
  target: GroupResource & { name: string },
  question: Question,
  why: string,
): Promise<void> {
  const decision = await context.authorizer.authorize({
    user: context.user,
    verb: question.verb,
    group: GROUP,
    version: "v1",
    resource: question.resource,
    name: question.name,
    resourceRequest: true,
  });
  if (decision.allowed) return;
  throw errors.forbidden(
    target,
    target.name,
    `User "${context.user.name}" cannot ${question.verb} resource "${question.resource}" in API group "${GROUP}" at the cluster scope: ${why}`,
  );
}

/** Every (subject, grant) pair of a rule list, so adding a subject to a broader rule counts as new. */
function grants(rules: AccessRule[] | undefined, field: "users" | "teams"): Set<string> {
  const out = new Set<string>();
  for (const rule of rules ?? []) {
    const grant = JSON.stringify([[...(rule.verbs ?? [])].sort(), [...(rule.subresources ?? [])].sort()]);
    for (const subject of rule[field] ?? []) out.add(`${subject}\u0000${grant}`);
  }
  return out;
}

/** `bind` on each user and team that a rule change grants something new to. */
export async function checkAccessRuleChanges(
  context: RequestContext,
  target: GroupResource & { name: string },
  next: AccessRule[] | undefined,
  old: AccessRule[] | undefined,
): Promise<void> {
  for (const [field, resource] of [
    ["users", "users"],
    ["teams", "teams"],
  ] as const) {
    const before = grants(old, field);
    const checked = new Set<string>();
    for (const entry of grants(next, field)) {
      if (before.has(entry)) continue;
      const subject = entry.slice(0, entry.indexOf("\u0000"));
      if (checked.has(subject)) continue;
      checked.add(subject);
      // "*" grants every user: binding all of them needs bind on the whole collection.
      const name = subject === "*" ? undefined : subject;
      const who = name ? `${resource.slice(0, -1)} "${name}"` : `all ${resource}`;
      await require(context, target, {
        verb: "bind",
        resource,
        name,
      }, `granting ${who} access in spec.access needs it`);
    }
  }
}

/** `makeowner` on the new owning user or team. */
export async function checkOwnerChange(
  context: RequestContext,
  target: GroupResource & { name: string },
  next: Owner | undefined,
  old: Owner | undefined,
): Promise<void> {
  if (next?.user && next.user !== old?.user) {
    const why = `making user "${next.user}" the owner needs it`;
    await require(context, target, { verb: "makeowner", resource: "users", name: next.user }, why);
  }
  if (next?.team && next.team !== old?.team) {
    const why = `making team "${next.team}" the owner needs it`;
    await require(context, target, { verb: "makeowner", resource: "teams", name: next.team }, why);
  }
}

/** `bind` on each user newly listed (team membership grants the team's rights). */
export async function checkMemberChanges(
  context: RequestContext,
  target: GroupResource & { name: string },
  next: string[] | undefined,
  old: string[] | undefined,
): Promise<void> {
  const before = new Set(old ?? []);
  for (const user of new Set(next ?? [])) {
    if (before.has(user)) continue;
    const why = `adding user "${user}" to spec.users needs it`;
    await require(context, target, { verb: "bind", resource: "users", name: user }, why);
  }
}

/**
 * `escalate` on the object when any of `fields` of its spec changed. Only the admin role holds `escalate`: access
 * rules and ownership never grant it, so nobody raises their own or anyone's rights without being an admin.
 */
export async function checkPrivilegedFields(
  context: RequestContext,
  target: GroupResource & { name: string },
  next: object | undefined,
  old: object | undefined,
  fields: readonly string[],
): Promise<void> {
  const value = (spec: object | undefined, field: string) => normalize((spec as Record<string, unknown>)?.[field]);
  const changed = fields.filter((field) => !isDeepStrictEqual(value(next, field), value(old, field)));
  if (changed.length === 0) return;
  await require(context, target, {
    verb: "escalate",
    resource: target.resource,
    name: target.name,
  }, `changing ${changed.map((f) => `spec.${f}`).join(", ")} needs it`);
}

/** Absent, empty and false/0 are the same setting. */
function normalize(value: unknown): unknown {
  if (value === undefined || value === null || value === false || value === 0 || value === "") return undefined;
  if (Array.isArray(value) && value.length === 0) return undefined;
  return value;
}
