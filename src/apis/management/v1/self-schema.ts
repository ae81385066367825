// Self: schema and the types derived from it (no run-time imports beyond the builders: the console imports them).
// The answer to POST selves: who the caller is, or the credential in spec.accessKey.

import {
  array,
  integer,
  type KindOf,
  object,
  openObject,
  type Static,
  string,
  stringList,
} from "../../../apimachinery/schema-builders.ts";

const entityFields = (what: string) => ({
  name: string(`Object name of the ${what}.`),
  username: string("Login name."),
  displayName: string("Name shown in the UI."),
  email: string("E-mail address."),
});
const userEntity = entityFields("user");

const entity = (what: string) => object(entityFields(what), `The ${what}.`, ["name"]);

export const selfSchema = {
  spec: object(
    {
      accessKey: string(
        'Optional: another credential (access key or direct cluster endpoint token) to describe instead of the caller. Only for keys with the role "virtualcluster" and admins. Never returned.',
      ),
    },
    "What to describe.",
  ),
  status: object(
    {
      user: object(
        { ...userEntity, teams: array(entity("team"), "Teams of the user.") },
        "The user, when the key belongs to one.",
        ["name", "teams"],
      ),
      team: entity("team, when the key belongs to one"),
      accessKey: string("Object name of the access key."),
      accessKeyScope: openObject("Scope of the access key."),
      accessKeyType: string("Type of the access key."),
      accessKeyExpirationTimestamp: string(
        "When the credential stops authenticating by its lifetime alone (ttl, the platform's maximum, a token's exp), if it has one. Disabling or deleting it ends it sooner.",
      ),
      subject: string("Subject of the caller."),
      uid: string("Uid of the user or team."),
      groups: stringList("Effective groups: the user's groups and teams."),
      platformHost: string("Domain of the platform, without scheme."),
      projectNamespacePrefix: string("Prefix of project namespaces."),
      instanceHeartbeatSeconds: integer(
        "How often a virtual cluster reports to the platform, in seconds; the platform marks an instance offline after missing a few.",
      ),
    },
    "Who the caller is.",
    ["groups", "platformHost", "projectNamespacePrefix"],
  ),
};

export type Self = KindOf<typeof selfSchema>;
export type SelfStatus = Static<typeof selfSchema.status>;
/** A user or team as Self names it. */
export type SelfEntity = NonNullable<SelfStatus["team"]>;
