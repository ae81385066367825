// User: a person or system that can access the platform. Cluster-scoped.

import { type FieldError, fieldError } from "../../../apimachinery/field-errors.ts";
import type { GrantingField } from "../../../registry/authorization-facts.ts";
import { defineResource } from "../../../registry/define-resource.ts";
import type { ResourceDefinition } from "../../../registry/types.ts";
import { CATEGORY, GROUP, VERSION } from "./common.ts";
import { accessRulesField, ownerField, privilegedField } from "./granting-fields.ts";
import { RESERVED_CLAIMS } from "./reserved-claims.ts";
import { SSO_SUBJECT_PREFIX, ssoSubjectProblem } from "./sso-subject.ts";
import { carryGenerations, startSessionGeneration, tokenGenerationErrors } from "./user-generations.ts";
import { userSchema, userSpecFields } from "./user-schema.ts";

export type { User, UserSpec } from "./user-schema.ts";

/** Platform verbs on users, beyond the standard ones (used by access rules and authorization). */
export const USER_VERBS = ["bind", "makeowner"] as const;

/** What a user may change on its own User; every other spec field needs `escalate` (the admin role). */
export const USER_PROFILE_FIELDS = ["displayName", "description", "icon", "email"] as const;
const PRIVILEGED_FIELDS = Object.keys(userSpecFields).filter(
  (field) => !(USER_PROFILE_FIELDS as readonly string[]).includes(field),
);

/** A value granting something through each privileged field that names no subject (for the grant table test). */
const SECRET_REF = { secretName: "granted", secretNamespace: "default", key: "value" };
const PRIVILEGED_EXAMPLES: Record<string, unknown> = {
  username: "granted-name",
  subject: "granted-subject",
  verifiedEmail: "granted@example.com",
  groups: ["granted"],
  ssoGroups: ["granted"],
  passwordRef: SECRET_REF,
  codesRef: SECRET_REF,
  imagePullSecrets: [{ secretName: "granted" }],
  tokenGeneration: 7,
  disabled: true,
  clusterRoles: [{ name: "admin" }],
  extraClaims: { granted: "yes" },
};

/**
 * Every spec field but the profile needs escalate to change; access rules and the owner also name subjects. A new
 * spec field is privileged by default, and must say what granting through it looks like (or the module fails).
 */
const USER_GRANTS: GrantingField[] = PRIVILEGED_FIELDS.map((field) => {
  if (field === "owner") return ownerField({ escalate: true });
  if (field === "access") return accessRulesField("spec.access", { escalate: true });
  if (!(field in PRIVILEGED_EXAMPLES)) throw new Error(`users: privileged field spec.${field} needs an example`);
  return privilegedField(`spec.${field}`, PRIVILEGED_EXAMPLES[field]);
});

export const userDefinition: ResourceDefinition = defineResource({
  group: GROUP,
  version: VERSION,
  kind: "User",
  plural: "users",
  singular: "user",
  shortNames: ["usr"],
  categories: [CATEGORY],
  namespaced: false,
  description: "User is a person or system that can access the platform.",
  schema: userSchema,
  statusSubresource: false,
  authorization: {
    // A user reads and edits its own User (privileged fields need escalate), lists its keys, sets its password.
    ownerRights: {
      holder: "self",
      verbs: ["get", "list", "watch", "update", "patch"],
      subresources: { accesskeys: ["get"], password: ["create"] },
    },
    credentials: [{ subresource: "password", verbs: "*", boundedBy: false }],
    // A new user's privileged fields are set by whoever may create users at all (admins).
    grants: USER_GRANTS,
  },
  strategy: {
    prepareForCreate(user) {
      user.spec ??= {};
      user.spec.username ||= user.metadata.name ?? undefined;
      // A username in the sso: form would link an identity by accident: it needs an explicit subject (validate).
      if (!user.spec.username?.startsWith(SSO_SUBJECT_PREFIX)) user.spec.subject ||= user.spec.username;
      startSessionGeneration(user);
    },
    prepareForUpdate(user, old) {
      user.spec ??= {};
      carryGenerations(user, old);
    },
    validateUpdate: (user, old) => tokenGenerationErrors(user, old),
    validate(user) {
      const errs: FieldError[] = [];
      const subjectProblem = ssoSubjectProblem(user.spec?.subject);
      if (subjectProblem) errs.push(fieldError.invalid("spec.subject", user.spec?.subject, subjectProblem));
      if (!user.spec?.subject && user.spec?.username?.startsWith(SSO_SUBJECT_PREFIX)) {
        errs.push(
          fieldError.required(
            "spec.subject",
            "a username starting with sso: needs an explicit subject (sso: subjects link single sign-on identities)",
          ),
        );
      }
      for (const claim of Object.keys(user.spec?.extraClaims ?? {})) {
        if (RESERVED_CLAIMS.has(claim)) {
          errs.push(
            fieldError.invalid(
              `spec.extraClaims.${claim}`,
              claim,
              "is a claim the platform's OpenID provider sets itself; choose another name",
            ),
          );
        }
      }
      (user.spec?.access ?? []).forEach((rule, i) => {
        if (Array.isArray(rule.verbs) && rule.verbs.length === 0) {
          errs.push(fieldError.required(`spec.access[${i}].verbs`, "at least one verb is required"));
        }
      });
      return errs;
    },
  },
  columns: [
    { name: "Username", type: "string", description: "Name used to log in.", cell: (u) => u.spec?.username },
    { name: "Email", type: "string", description: "The user's e-mail address.", cell: (u) => u.spec?.email },
    {
      name: "Disabled",
      type: "boolean",
      description: "Whether the user can no longer log in.",
      cell: (u) => u.spec?.disabled === true,
    },
    {
      name: "Display Name",
      type: "string",
      priority: 1,
      description: "Name shown in the UI.",
      cell: (u) => u.spec?.displayName,
    },
  ],
  selectableFields: {
    "spec.username": (u) => u.spec?.username,
    "spec.email": (u) => u.spec?.email,
    "spec.disabled": (u) => String(u.spec?.disabled === true),
  },
});
