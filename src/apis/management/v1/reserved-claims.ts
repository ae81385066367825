// Claims the platform's OpenID provider sets itself (registered JWT claims, OpenID Connect's own, and the identity
// claims it derives from the User). An admin's spec.extraClaims or an SSO connector's allowedExtraClaims never
// override them: a user's tokens cannot carry another subject, issuer, audience or a verified e-mail through them.

export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  "iss",
  "sub",
  "aud",
  "exp",
  "nbf",
  "iat",
  "jti",
  "azp",
  "nonce",
  "auth_time",
  "acr",
  "amr",
  "sid",
  "at_hash",
  "c_hash",
  "s_hash",
  "cnf",
  "scope",
  "client_id",
  "name",
  "preferred_username",
  "email",
  "email_verified",
  "groups",
  "_claim_names",
  "_claim_sources",
]);
