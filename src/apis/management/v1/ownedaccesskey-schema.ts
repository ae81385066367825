// OwnedAccessKey: types and schema (every field of the specification, deprecated ones included).

import {
  array,
  boolean,
  declared,
  integer,
  item,
  type KindOf,
  mapOf,
  object,
  type Static,
  string,
  stringList,
  timestamp,
} from "../../../apimachinery/schema-builders.ts";
import { descriptionSchema, displayNameSchema } from "./common.ts";

/** Key types of the product: interactive login, user-made, system subjects and a few special ones. */
export const ACCESS_KEY_TYPES = ["", "Login", "User", "Other", "Reset", "OIDCRefreshToken", "NetworkPeer"] as const;

/** Roles a key's scope can name. Unknown roles are accepted (newer clients) but grant nothing. */
export const SCOPE_ROLES = { virtualCluster: "virtualcluster", platformCli: "platformCLI", agent: "agent" } as const;

const ruleSchema = object(
  {
    verbs: stringList("Matching verbs. Empty implies every verb."),
    resources: array(
      object(
        {
          group: string("API group; empty is the core group."),
          resources: stringList(
            'Resources such as "pods" or "pods/log", with wildcard forms. Empty: all in the group.',
          ),
          resourceNames: stringList("Object names. Requires resources. Empty: every instance."),
        },
        "Resources of one API group.",
      ),
      "Matching resources. Empty implies all kinds in all groups.",
    ),
    namespaces: stringList('Matching namespaces; "" matches cluster-scoped resources. Empty implies every namespace.'),
    nonResourceURLs: stringList("URL paths; a wildcard is allowed only as the full final step."),
    requestTargets: stringList("Allowed request targets. Empty implies every request."),
    cluster: string("Only applies to cluster requests; when set, no non-cluster requests are allowed."),
    virtualClusters: array(
      object(
        { name: string("Virtual cluster name; empty = all."), namespace: string("Namespace; empty = all.") },
        "A virtual cluster.",
      ),
      "Only applies to virtual cluster requests.",
    ),
  },
  "A rule (deprecated: use projects, spaces and virtualClusters).",
);

/** A role's project as sent: a name, or the specification example's {project: NAME}. */
type RoleProject = string | { project: string };

export const scopeSchema = object(
  {
    roles: array(
      object(
        {
          role: string(
            'Role name: "virtualcluster" (connect a virtual cluster), "platformCLI" (the CLI\'s reads) or "agent" (connect the agent of the clusters listed in clusters).',
          ),
          projects: array(
            declared<RoleProject>({
              description:
                'A project name ("*" selects all), or {project: NAME} as the specification\'s example writes it.',
              "x-kubernetes-preserve-unknown-fields": true,
              anyOf: [
                { type: "string" },
                { type: "object", properties: { project: { type: "string" } }, required: ["project"] },
              ],
            }),
            'Projects the role applies to; "*" selects all. Stored as names: {project: NAME} items become NAME.',
          ),
          virtualClusters: stringList("Virtual clusters the role applies to."),
          clusters: stringList('Clusters the role applies to (role "agent"); "*" selects all.'),
        },
        "A managed role.",
      ),
      "Managed roles the key is limited to.",
    ),
    projects: array(
      object({ project: string('Project name; "*" selects all projects.') }, "A project."),
      "Projects the key may access.",
    ),
    spaces: array(
      object({ project: string("Project of the space."), space: string('Space name; "*" selects all.') }, "A space."),
      "Spaces the key may access.",
    ),
    virtualClusters: array(
      object(
        {
          project: string("Project of the virtual cluster."),
          virtualCluster: string('Virtual cluster name; "*" selects all.'),
        },
        "A virtual cluster.",
      ),
      "Virtual clusters the key may access.",
    ),
    clusters: array(
      object({ cluster: string('Cluster name; "*" selects all clusters.') }, "A cluster."),
      "Clusters the key may access.",
    ),
    rules: array(ruleSchema, "Deprecated: use projects, spaces and virtualClusters."),
    allowPlatformCli: boolean('Deprecated: use the role "platformCLI". Allows the read-only requests of the CLI.'),
  },
  "Limits what the key may do. A scope only narrows the rights of the key's owner; empty means no limit.",
);

/**
 * A role's projects as names: {project: NAME} items become NAME. Writes store names only (canonicalizeScope), but
 * the schema admits both spellings, so readers of a scope go through this too.
 */
export const roleProjectNames = (projects: readonly RoleProject[] | undefined): string[] | undefined =>
  projects?.map((project) => (typeof project === "string" ? project : project.project));

/** The one stored spelling of a scope: role projects as names (the schema has checked each item's shape). */
export function canonicalizeScope(scope: AccessKeyScope | undefined): void {
  for (const role of scope?.roles ?? []) {
    if (Array.isArray(role?.projects)) role.projects = roleProjectNames(role.projects);
  }
}

export const spec = object(
  {
    displayName: displayNameSchema,
    description: descriptionSchema("Description of the key."),
    user: string("User the key belongs to. Defaults to the caller."),
    team: string("Team the key belongs to (instead of a user)."),
    subject: string("Generic subject, usable instead of user or team."),
    groups: stringList("Extra groups applied when using the key."),
    key: string(
      "The access key, used as bearer token. Generated when empty (256 bits); a supplied key needs at least 32 characters. Returned only in the create response; stored as a digest.",
    ),
    disabled: boolean("When true the key still exists but does not work for API access."),
    ttl: integer("Time to live of the key in seconds, counted from creation (or from the last activity). 0: none.", {
      minimum: 0,
    }),
    ttlAfterLastActivity: boolean("When set, the time to live starts after the last activity instead of creation."),
    scope: scopeSchema,
    type: string("Whether the key is managed by a user (User) or by the platform (Login, Other, ...).", {
      enum: [...ACCESS_KEY_TYPES],
    }),
    identity: object(
      {
        userId: string("Subject of the user."),
        username: string("Username."),
        preferredUsername: string("Preferred username."),
        email: string("E-mail address."),
        emailVerified: boolean("Whether the e-mail address is verified."),
        extraClaims: mapOf(item.stringList(), "Claims allowed by the auth config."),
        groups: stringList("Groups of the identity."),
        connector: string("Connector the key was created from."),
        connectorData: string("Data for later connector requests; never returned by the API."),
        identityRefresh: timestamp("Last time the identity was refreshed."),
      },
      "SSO login data, if available.",
    ),
    oidcProvider: object(
      {
        clientId: string("OIDC client id."),
        nonce: string("Nonce."),
        redirectUri: string("Redirect URI."),
        scopes: string("Scopes."),
      },
      "If the key is a refresh token: information about it.",
    ),
    parent: string("Deprecated. Shares OIDC and external token information among keys."),
    oidcLogin: object(
      {
        idToken: string("Current id token; never returned by the API."),
        accessToken: string("Current access token; never returned by the API."),
        refreshToken: string("Current refresh token; never returned by the API."),
        lastRefresh: timestamp("Last id token refresh."),
      },
      "Deprecated: use identity.",
    ),
  },
  "The desired state of the access key.",
);

export const status = object(
  {
    lastActivity: timestamp("Last time the key was used to access the API (recorded at most once a minute)."),
    expirationTimestamp: timestamp(
      "When the key stops working by its lifetime (its ttl, the platform's maximum key age, the Login key lifetime). Read-only: computed on every read; absent when nothing limits it.",
    ),
  },
  "The observed state of the access key.",
);

export const ownedAccessKeySchema = { spec, status };

export type OwnedAccessKey = KindOf<typeof ownedAccessKeySchema>;
export type OwnedAccessKeySpec = Static<typeof spec>;
export type AccessKeyScope = Static<typeof scopeSchema>;
/** Deprecated rule shape (scope.rules), also used by audit policies. */
export type AccessKeyScopeRule = Static<typeof ruleSchema>;
export type AccessKeyIdentity = NonNullable<OwnedAccessKeySpec["identity"]>;
