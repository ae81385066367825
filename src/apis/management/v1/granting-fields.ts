// The granting fields of the management kinds, declared once (AuthorizationFacts.grants): how each names its
// subjects and what a value granting one looks like. access-checks.ts enforces them; a kind lists its fields with
// these builders, so each shape of field (owner, member list, access rules, project members) is read in one place.

import type { GrantedSubject, GrantingField, SubjectKind } from "../../../registry/authorization-facts.ts";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string" && item !== "") : [];
const sortedList = (value: unknown) => strings(value).sort();

/** `spec.owner: {user, team}`: the new owner needs `makeowner`; changing it also needs escalate when `escalate`. */
export function ownerField(options: { escalate?: boolean } = {}): GrantingField {
  return { ...userOrTeamField("spec.owner", "owner"), escalate: options.escalate };
}

/**
 * `spec.runtime: {user, team}` of an instance: whose runtime keys report for it. Naming a user or team there hands
 * them the instance's status, so it needs `makeowner` on them, as making them the owner would.
 */
export function runtimeField(): GrantingField {
  return userOrTeamField("spec.runtime", "reporting runtime");
}

/** A `{user, team}` field that grants `grant` to each subject it names, through `makeowner`. */
function userOrTeamField(path: string, grant: string): GrantingField {
  return {
    path,
    subjects: {
      verb: "makeowner",
      kinds: ["User", "Team"],
      of(value, at) {
        if (!isRecord(value)) return [];
        const out: GrantedSubject[] = [];
        if (typeof value.user === "string" && value.user) {
          out.push({ kind: "User", name: value.user, grant, path: `${at}.user` });
        }
        if (typeof value.team === "string" && value.team) {
          out.push({ kind: "Team", name: value.team, grant, path: `${at}.team` });
        }
        return out;
      },
    },
    example: (subject) => (subject.kind === "User" ? { user: subject.name } : { team: subject.name }),
  };
}

/** A list of user names whose members share the object's rights (`spec.users` of a team). */
export function userListField(path: string, options: { escalate?: boolean } = {}): GrantingField {
  return {
    path,
    escalate: options.escalate,
    subjects: {
      verb: "bind",
      kinds: ["User"],
      of: (value, at) =>
        Array.isArray(value)
          ? value.flatMap((name, i) =>
              typeof name === "string" && name
                ? [{ kind: "User" as const, name, grant: "member", path: `${at}[${i}]` }]
                : [],
            )
          : [],
    },
    example: (subject) => [subject.name],
  };
}

/** Access rules `[{verbs, subresources, users, teams}]`: each user and team is granted the rule's verbs. */
export function accessRulesField(path: string, options: { escalate?: boolean } = {}): GrantingField {
  return {
    path,
    escalate: options.escalate,
    subjects: {
      verb: "bind",
      kinds: ["User", "Team"],
      of(value, at) {
        if (!Array.isArray(value)) return [];
        return value.flatMap((rule, i) => {
          if (!isRecord(rule)) return [];
          const grant = JSON.stringify([sortedList(rule.verbs), sortedList(rule.subresources)]);
          const named = (field: "users" | "teams", kind: SubjectKind) =>
            Array.isArray(rule[field])
              ? (rule[field] as unknown[]).flatMap((name, j) =>
                  typeof name === "string" && name ? [{ kind, name, grant, path: `${at}[${i}].${field}[${j}]` }] : [],
                )
              : [];
          return [...named("users", "User"), ...named("teams", "Team")];
        });
      },
    },
    example: (subject) => [{ verbs: ["get"], [subject.kind === "User" ? "users" : "teams"]: [subject.name] }],
  };
}

/** Project members `[{kind, name, clusterRole}]`: each user or team gets the member's project role. */
export function projectMembersField(path: string): GrantingField {
  return {
    path,
    subjects: {
      verb: "bind",
      kinds: ["User", "Team"],
      of: (value, at) =>
        Array.isArray(value)
          ? value.flatMap((member, i) => {
              if (!isRecord(member) || typeof member.name !== "string" || !member.name) return [];
              const kind: SubjectKind = member.kind === "Team" ? "Team" : "User";
              const grant = typeof member.clusterRole === "string" ? member.clusterRole : "";
              return [{ kind, name: member.name, grant, path: `${at}[${i}].name` }];
            })
          : [],
    },
    example: (subject) => [{ kind: subject.kind, name: subject.name, clusterRole: "view" }],
  };
}

/** A field no subject is named in, whose every change needs `escalate` (roles, groups, allowed clusters...). */
export function privilegedField(path: string, example: unknown): GrantingField {
  return { path, escalate: true, example: () => example };
}
