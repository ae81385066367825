// Schema of status.auth: the login providers (OIDC, code hosts, identity providers, SAML), password login,
// extra connectors and the global access key limits.

import { array, boolean, object, string, stringList, stringMap } from "../apimachinery/schema-builders.ts";
import { count, secret, stringWithDefault } from "./schema-builders.ts";

const clientId = string("Client ID registered with the provider.");
const clientSecret = secret("Client secret registered with the provider.");
const redirectURI = string(
  "Callback address the provider redirects to after login (https://<platform host>/auth/...).",
);

export const oidcProviderSchema = object(
  {
    issuerUrl: string("Issuer URL of the provider. The provider must support OpenID Connect discovery."),
    clientId,
    clientSecret,
    redirectURI,
    postLogoutRedirectURI: string("Address the provider sends the browser to after logout."),
    caFile: string("Path to a PEM file of the root certificate that signed the provider's certificate. Optional."),
    insecureCa: boolean("Skip validation of the provider's certificate."),
    preferredUsername: string("Claim holding the preferred username."),
    platformUsernameClaim: string("JWT field used as the platform username."),
    usernameClaim: string(
      "JWT field used as the user id (default sub): with the connector id, the only key to the user's account. email needs email_verified true in the token.",
    ),
    emailClaim: string("JWT field holding the e-mail address."),
    allowedExtraClaims: stringList("Extra claims copied into the user's identity."),
    usernamePrefix: string("Prefix added to usernames."),
    groupsClaim: string("Claim holding the groups; must be a string or a list of strings in the token."),
    groups: stringList("When non-empty, access is denied unless the user is in at least one of these groups."),
    scopes: stringList('Scopes requested from the provider. Default when empty: ["email", "profile"].'),
    getUserInfo: boolean("Fetch extra claims from the provider's userinfo endpoint."),
    groupsPrefix: string("Prefix added to group names."),
    type: string("Type of the provider; display only."),
    resource: string("Value of the `resource` parameter sent to the provider's token endpoint."),
  },
  "Generic OpenID Connect login.",
);

export const codeHostASchema = object(
  {
    clientId,
    clientSecret,
    redirectURI,
    orgs: array(
      object(
        {
          name: string("Name of the organization."),
          teams: stringList("Teams of the organization; empty means any member of the organization."),
        },
        "An organization whose members may log in.",
      ),
      "When given, the user must belong to at least one organization. Group claims have the form (org):(team).",
    ),
    hostName: string("Host name of the provider; only for its enterprise edition."),
    rootCA: string("Root certificate of the provider; optional, enterprise edition only."),
  },
  "Login through the first code hosting provider.",
);

export const codeHostBSchema = object(
  {
    clientId,
    clientSecret,
    redirectURI,
    baseURL: string("Address of the provider. Optional; defaults to its public hosted address."),
    groups: stringList(
      "Allow-list of groups: only listed groups enter the groups claim, and a user in none of them is not authenticated.",
    ),
  },
  "Login through the second code hosting provider.",
);

export const idpASchema = object(
  {
    clientId,
    clientSecret,
    redirectURI,
    scopes: stringList('Scopes requested from the provider. Default when empty: ["profile", "email"].'),
    hostedDomains: stringList("When non-empty, only users of these domains may log in."),
    groups: stringList("When non-empty, only users of these groups may log in."),
    serviceAccountFilePath: string(
      "Optional path to a service account file, used to check groups through the provider's directory API.",
    ),
    adminEmail: string(
      "Administrator account the service account impersonates. Required when serviceAccountFilePath is set.",
    ),
  },
  "Login through the first identity provider.",
);

export const idpBSchema = object(
  {
    clientId,
    clientSecret,
    redirectURI,
    tenant: stringWithDefault(
      "Tenant: one of common, consumers, organizations (shared: they take accounts of every tenant), or a tenant id or name.",
      "common",
    ),
    allowedTenants: stringList(
      "Tenant ids (GUIDs) whose people may log in. Required with a shared tenant unless allowAllTenants is set; with an organisation tenant it narrows that tenant further.",
    ),
    allowAllTenants: boolean(
      "With a shared tenant: let people of any tenant log in (each gets an account of their own; the platform warns in /auth/info and the log). Default false: a shared tenant without allowedTenants refuses every login.",
    ),
    groups: stringList("Groups the user must be a member of."),
    onlySecurityGroups: boolean("Restrict the groups to security groups (default: all group kinds)."),
    useGroupsAsWhitelist: boolean("Restrict the groups claim to the configured groups."),
  },
  "Login through the second identity provider.",
);

export const SAML_PERSISTENT_NAME_ID = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";

export const samlSchema = object(
  {
    redirectURI: string("Callback address; must match any Destination element of the response exactly."),
    ssoURL: string("Single sign-on address the AuthnRequest is POSTed to."),
    caData: string(
      "Base64 CA certificate that signs the responses. One of caData, ca or insecureSkipSignatureValidation must be set.",
    ),
    ca: string("Path to the CA certificate that signs the responses."),
    insecureSkipSignatureValidation: boolean("Do not validate response signatures (testing only)."),
    usernameAttr: string("Assertion attribute mapped to the username."),
    emailAttr: string("Assertion attribute mapped to the e-mail address."),
    groupsAttr: string("Assertion attribute mapped to the groups."),
    entityIssuer: string("Sent as Issuer in the AuthnRequest; overrides redirectURI as the required audience."),
    ssoIssuer: string("Expected issuer of the responses. Optional."),
    groupsDelim: string("When set, the groups come as one string split by this delimiter."),
    allowedGroups: stringList("Groups allowed to log in."),
    filterGroups: boolean("With allowedGroups: forward only the allowed groups."),
    nameIDPolicyFormat: stringWithDefault(
      "Requested NameID format; may be abbreviated to its last component, such as emailAddress. Only a persistent NameID identifies a person: a response with any other format is refused.",
      SAML_PERSISTENT_NAME_ID,
    ),
  },
  "SAML 2.0 login.",
);

/** The provider blocks, by field name: the same set appears in auth and in every connector. */
export const providerSchemas = {
  oidc: oidcProviderSchema,
  codeHostA: codeHostASchema,
  codeHostB: codeHostBSchema,
  idpA: idpASchema,
  idpB: idpBSchema,
  saml: samlSchema,
};

export const PROVIDERS = Object.keys(providerSchemas);

export const authSchema = object(
  {
    ...providerSchemas,
    password: object({ disabled: boolean("When true, password login is off.") }, "Password login."),
    connectors: array(
      object(
        {
          id: string("Identifier of the connector; appears in the login URL."),
          displayName: string("Name shown in the UI."),
          ...providerSchemas,
        },
        "An additional login connector: an id, a display name and exactly one provider block.",
        ["id"],
      ),
      "Additional login connectors.",
    ),
    disableTeamCreation: boolean("When true, no teams are created for new groups on SSO login. Default false."),
    disableUserCreation: boolean("When true, SSO connectors do not create a user on first sign-in. Default false."),
    accessKeyMaxTTLSeconds: count("Global maximum life of any access key, in seconds. 0 or unset: no limit."),
    loginAccessKeyTTLSeconds: count(
      "Seconds an access key from login is kept before it is deleted. Unset: 20 days (1728000). 0 disables the time to live.",
    ),
    customHttpHeaders: stringMap("Extra response headers set on the authentication endpoints."),
    groupsFilters: stringList("Regular expressions; only SSO groups matching one of them are saved in the user."),
  },
  "Authentication: login providers, password login, connectors and access key limits.",
);
