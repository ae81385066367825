// The subject of a user that single sign-on reaches: `sso:<connector id>:<the provider's user id>`. A login finds an
// account only by this link (src/identity/sso/sso-accounts.ts), so the same provider id from two connectors is two
// people, and no provider id can equal a local user's subject (local subjects default to the username, and a
// username in this form without an explicit subject is refused). Setting it on an existing user is how an admin
// links that user to an external identity.

/** A connector id: what the Config allows in auth.connectors[].id (and the built-in block names). */
const CONNECTOR_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const SSO_SUBJECT_PREFIX = "sso:";

export interface SsoSubject {
  connector: string;
  /** The provider's own id of the person (OIDC sub, account id, tenant/object id, entity id|NameID). */
  id: string;
}

export function ssoSubject(connector: string, id: string): string {
  return `${SSO_SUBJECT_PREFIX}${connector}:${id}`;
}

/** The connector and id of a subject in the sso: form; undefined for any other subject. */
export function parseSsoSubject(subject: string | undefined): SsoSubject | undefined {
  if (!subject?.startsWith(SSO_SUBJECT_PREFIX)) return undefined;
  const rest = subject.slice(SSO_SUBJECT_PREFIX.length);
  const colon = rest.indexOf(":");
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  const connector = rest.slice(0, colon);
  return CONNECTOR_ID.test(connector) ? { connector, id: rest.slice(colon + 1) } : undefined;
}

/** Why a subject that starts with sso: is not a link, or undefined when it is one (or is not in that form). */
export function ssoSubjectProblem(subject: string | undefined): string | undefined {
  if (!subject?.startsWith(SSO_SUBJECT_PREFIX) || parseSsoSubject(subject)) return undefined;
  return "a subject starting with sso: links a single sign-on identity and must read sso:<connector id>:<the provider's user id>";
}
