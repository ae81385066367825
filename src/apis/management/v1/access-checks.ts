// Permission checks on what a write grants, for every field a kind declares in AuthorizationFacts.grants
// (granting-fields.ts builds them): naming a user or team in a field that grants rights needs `bind` on it (the
// owner: `makeowner`), and the subject must exist (422); changing a privileged field needs `escalate` on the object
// itself. The caller's authorizer answers; a denial is a 403 worded like the API server's, naming the missing verb.
//
// withGrantChecks() runs them for a definition on create and update, after canonicalize and before the kind's own
// prepare hook, so a refused write costs nothing more (an instance's CA is not even made). Only what a write adds is checked: a subject already granted the same thing
// (or since deleted) does not block an unrelated edit.

import { isDeepStrictEqual } from "node:util";
import { errors } from "../../../apimachinery/errors.ts";
import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import type { GroupResource, KubeObject } from "../../../apimachinery/types.ts";
import type { GrantedSubject, GrantingField, SubjectKind } from "../../../registry/authorization-facts.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { GROUP } from "./common.ts";

export type { AccessRule, Owner } from "./common.ts";

/** Where grant checks learn whether a named user or team exists. */
export interface SubjectDirectory {
  exists(kind: SubjectKind, name: string): Promise<boolean>;
}

interface Question {
  verb: string;
  resource: string;
  name?: string;
}

type Target = GroupResource & { name: string };

/** Asks the caller's authorizer; throws a 403 about `target` when denied. */
async function require(context: RequestContext, target: Target, question: Question, why: string): Promise<void> {
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

/** The value at a dotted path (undefined where the path leads nowhere). */
function valueAt(object: unknown, path: string): unknown {
  let value = object;
  for (const segment of path.split(".")) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** Absent, empty and false/0 are the same setting. */
function normalize(value: unknown): unknown {
  if (value === undefined || value === null || value === false || value === 0 || value === "") return undefined;
  if (Array.isArray(value) && value.length === 0) return undefined;
  return value;
}

const RESOURCE: Record<SubjectKind, string> = { User: "users", Team: "teams" };
const subjectKey = (s: GrantedSubject) => `${s.kind}\u0000${s.name}`;

/** Subjects of `field` granted something in `next` that `old` did not grant them, one entry per subject. */
function newlyGranted(field: GrantingField, next: KubeObject, old: KubeObject | undefined): GrantedSubject[] {
  const of = field.subjects?.of;
  if (!of) return [];
  const grantKey = (s: GrantedSubject) => `${subjectKey(s)}\u0000${s.grant}`;
  const before = new Set(old ? of(valueAt(old, field.path), field.path).map(grantKey) : []);
  const seen = new Set<string>();
  return of(valueAt(next, field.path), field.path).filter((s) => {
    if (before.has(grantKey(s)) || seen.has(subjectKey(s))) return false;
    seen.add(subjectKey(s));
    return true;
  });
}

export interface GrantCheck {
  context: RequestContext;
  target: Target;
  kind: { group: string; kind: string };
  grants: readonly GrantingField[];
  next: KubeObject;
  old?: KubeObject;
  subjects: SubjectDirectory;
}

/** Runs every check of `grants` on a write: escalate, then bind/makeowner per new subject, then existence (422). */
export async function checkGrants(check: GrantCheck): Promise<void> {
  const { context, target, grants, next, old } = check;
  if (old) {
    const changed = grants.filter(
      (field) =>
        field.escalate && !isDeepStrictEqual(normalize(valueAt(next, field.path)), normalize(valueAt(old, field.path))),
    );
    if (changed.length > 0) {
      const why = `changing ${changed.map((field) => field.path).join(", ")} needs it`;
      await require(context, target, { verb: "escalate", resource: target.resource, name: target.name }, why);
    }
  }
  const added = grants.flatMap((field) => newlyGranted(field, next, old).map((subject) => ({ field, subject })));
  for (const { field, subject } of added) {
    const verb = field.subjects?.verb ?? "bind";
    // Creating an object owned by oneself gives the creator nothing it did not have by creating it.
    if (verb === "makeowner" && !old && subject.kind === "User" && subject.name === context.user.name) continue;
    const resource = RESOURCE[subject.kind];
    // "*" names every user: binding all of them needs bind on the whole collection.
    const name = subject.name === "*" ? undefined : subject.name;
    const who = name ? `${subject.kind.toLowerCase()} "${name}"` : `all ${resource}`;
    const why =
      verb === "makeowner"
        ? `making ${who} the ${subject.grant} needs it`
        : `granting ${who} rights through ${field.path} needs it`;
    await require(context, target, { verb, resource, name }, why);
  }
  const missing: FieldError[] = [];
  for (const { subject } of added) {
    if (subject.name === "*" || (await check.subjects.exists(subject.kind, subject.name))) continue;
    const detail = `no ${subject.kind.toLowerCase()} of that name exists: create it first`;
    missing.push({ ...fieldError.notFound(subject.path, subject.name), detail });
  }
  if (missing.length > 0) throw errors.invalid(check.kind, target.name, missing);
}

/** The definition with checkGrants() before its prepare hooks, when it declares granting fields. */
export function withGrantChecks(definition: ResourceDefinition, subjects: SubjectDirectory): ResourceDefinition {
  const grants = definition.authorization?.grants;
  if (!grants?.length) return definition;
  const strategy = definition.strategy;
  const run = (object: KubeObject, old: KubeObject | undefined, context: RequestContext) =>
    checkGrants({
      context,
      target: { group: definition.group, resource: definition.plural, name: object.metadata.name ?? "" },
      kind: { group: definition.group, kind: definition.kind },
      grants,
      next: object,
      old,
      subjects,
    });
  return {
    ...definition,
    strategy: {
      ...strategy,
      async prepareForCreate(object, context) {
        await run(object, undefined, context);
        await strategy.prepareForCreate?.(object, context);
      },
      async prepareForUpdate(object, old, context) {
        await run(object, old, context);
        await strategy.prepareForUpdate?.(object, old, context);
      },
    },
  };
}
