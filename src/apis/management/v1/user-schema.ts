// User: schema and the types derived from it (no run-time imports beyond the builders: the console imports these
// types). A user is a person or system that can access the platform.

import {
  array,
  boolean,
  integer,
  type KindOf,
  object,
  openObject,
  type Static,
  string,
  stringList,
  stringMap,
} from "../../../apimachinery/schema-builders.ts";
import {
  accessSchema,
  clusterRolesSchema,
  descriptionSchema,
  displayNameSchema,
  ownerSchema,
  secretRefSchema,
  TEXT_LIMITS,
} from "./common.ts";

/** The fields of spec, by name (user.ts derives the privileged ones from them). */
export const userSpecFields = {
  displayName: displayNameSchema,
  description: descriptionSchema("Description of the user."),
  owner: ownerSchema,
  username: string("Name used to log in. Defaults to the object's name."),
  icon: string(`URL of an icon shown for the user (at most ${TEXT_LIMITS.icon} characters).`, {
    maxLength: TEXT_LIMITS.icon,
  }),
  email: string(
    `The user's e-mail address (at most ${TEXT_LIMITS.email} characters). The user may change it; it then counts as unverified.`,
    { maxLength: TEXT_LIMITS.email },
  ),
  verifiedEmail: string(
    "The e-mail address last verified for the user: by the identity provider at a single sign-on login (email_verified true), or by an administrator who sets it. spec.email counts as verified only while it equals this address. Only administrators can set it.",
    { maxLength: TEXT_LIMITS.email },
  ),
  subject: string(
    "User subject as presented by the token. Defaults to the username. sso:<connector id>:<provider user id> links the user to that single sign-on identity: a login through the connector reaches this user only by it.",
  ),
  groups: stringList("Groups the user has access to."),
  ssoGroups: stringList("Groups remembered from SSO."),
  passwordRef: secretRefSchema("Reference to the user's password."),
  codesRef: secretRefSchema("Reference to the user's access keys."),
  imagePullSecrets: array(
    object(
      {
        apiGroup: string("API group of the referenced object."),
        kind: string("Kind of the referenced object."),
        secretName: string("Name of the Secret."),
        secretNamespace: string("Namespace of the Secret."),
        key: string("Key within the Secret's data."),
      },
      "A reference to an image pull secret.",
    ),
    "Secret references for image pulls the user has access to.",
  ),
  tokenGeneration: integer("Raising it invalidates every token issued to the user before.", { minimum: 0 }),
  disabled: boolean(
    "When true the user can no longer log in. All other resources are unaffected, and other users can still interact with this user.",
  ),
  clusterRoles: clusterRolesSchema,
  access: accessSchema,
  extraClaims: stringMap("Additional claims added by an admin."),
};

export const userSchema = {
  spec: object(userSpecFields, "The desired state of the user."),
  status: openObject("The observed state of the user."),
};

export type User = KindOf<typeof userSchema>;
export type UserSpec = Static<typeof userSchema.spec>;
