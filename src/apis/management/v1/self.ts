// Self (POST `selves` with `{}`, 201): who the caller is — user, teams, access key, scope, groups — plus the platform
// host and project namespace prefix. The command-line client validates a login with it. `spec.accessKey` may carry
// another credential (an access key's plain value or a direct cluster endpoint token) to describe it instead: the
// token review of virtual clusters, allowed to keys with the role `virtualcluster` and to admins. It is never echoed.

import { errors } from "../../../apimachinery/errors.ts";
import { array, integer, object, openObject, string, stringList } from "../../../apimachinery/schema-builders.ts";
import { isPlainObject, type KubeObject } from "../../../apimachinery/types.ts";
import type { RequestContext, ResourceDefinition } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";

export interface SelfEntity {
  name: string;
  username?: string;
  displayName?: string;
  email?: string;
}

export interface SelfStatus {
  user?: SelfEntity & { teams: SelfEntity[] };
  team?: SelfEntity;
  accessKey?: string;
  accessKeyScope?: unknown;
  accessKeyType?: string;
  /** When the credential stops authenticating by its lifetime alone (RFC 3339), if it has one. */
  accessKeyExpirationTimestamp?: string;
  subject?: string;
  uid?: string;
  groups: string[];
  platformHost: string;
  projectNamespacePrefix: string;
  /** How often a virtual cluster connected with this key should report to the platform. */
  instanceHeartbeatSeconds?: number;
}

/** Answers for the caller, or for the credential in spec.accessKey (400 when it does not authenticate, 403 when the
 * caller may not review credentials). */
export type DescribeCaller = (context: RequestContext, accessKey?: string) => Promise<SelfStatus>;

const entity = (what: string) =>
  object(
    {
      name: string(`Object name of the ${what}.`),
      username: string("Login name."),
      displayName: string("Name shown in the UI."),
      email: string("E-mail address."),
    },
    `The ${what}.`,
  );

const schema = {
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
        { ...(entity("user").properties as object), teams: array(entity("team"), "Teams of the user.") },
        "The user, when the key belongs to one.",
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
  ),
};

export function createSelfDefinition(describe: DescribeCaller): ResourceDefinition {
  const description = "Self describes the caller: user, teams, access key and its scope.";
  return {
    group: GROUP,
    version: VERSION,
    kind: "Self",
    plural: "selves",
    singular: "self",
    namespaced: false,
    description,
    schema,
    strategy: {},
    action: {
      kind: "Self",
      description,
      schema,
      verbs: ["create"],
      async handle({ context, body }) {
        const spec = isPlainObject(body) ? body.spec : undefined;
        if (spec !== undefined && !isPlainObject(spec)) throw errors.badRequest("spec must be an object");
        const accessKey = spec?.accessKey;
        if (accessKey !== undefined && typeof accessKey !== "string") {
          throw errors.badRequest("spec.accessKey must be a string");
        }
        const response: KubeObject = {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: "Self",
          metadata: {},
          spec: {},
          status: await describe(context, accessKey || undefined),
        };
        return response;
      },
    },
  };
}
