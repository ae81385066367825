// Kubernetes impersonation (`kubectl --as`, `--as-group`, `--as-uid`, `--as-user-extra`): a caller acts as another
// identity by sending Impersonate-User, Impersonate-Group (repeatable), Impersonate-Uid and Impersonate-Extra-<key>.
// As kube-apiserver's impersonation filter, each part is checked against the caller's rights first, with the verb
// `impersonate` on
//   users (core group) or serviceaccounts (core, in the account's namespace) for Impersonate-User,
//   groups (core) for each Impersonate-Group,
//   uids (authentication.k8s.io) for Impersonate-Uid,
//   userextras/<key> (authentication.k8s.io) for each value of Impersonate-Extra-<key>;
// any part refused answers 403, never a request carried out as the caller. The request then runs as the
// impersonated identity (authorization, flow control, the registry), and the audit event names both (`user` the
// caller, `impersonatedUser` the identity).
//
// Unlike upstream, which answers 500 "requested ... without impersonating a user", a group, uid or extra without a
// user is a 400: it is the client's mistake. A server maps the requested identity to its own callers
// (ImpersonationResolver): the cluster API server takes it as it is (kubernetesImpersonatedUser), the platform makes
// it one of its users (src/identity/impersonated-caller.ts).

import type { IncomingMessage } from "node:http";
import { errors } from "../apimachinery/errors.ts";
import type { AuthorizationAttributes, Authorizer, UserInfo } from "../registry/types.ts";
import { authorizeAttributes } from "./authorization.ts";

export const IMPERSONATE_USER = "impersonate-user";
export const IMPERSONATE_GROUP = "impersonate-group";
export const IMPERSONATE_UID = "impersonate-uid";
export const IMPERSONATE_EXTRA_PREFIX = "impersonate-extra-";

const ANONYMOUS = "system:anonymous";
const AUTHENTICATED = "system:authenticated";
const UNAUTHENTICATED = "system:unauthenticated";
const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";
const AUTHENTICATION_GROUP = "authentication.k8s.io";
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** What a request asks to act as. */
export interface ImpersonationRequest {
  user: string;
  /** Set when the user names a service account: `system:serviceaccount:<namespace>:<name>`. */
  serviceAccount?: { namespace: string; name: string };
  /** Undefined when no Impersonate-Group came: the server decides the groups. */
  groups?: string[];
  uid?: string;
  /** Keys lower case and percent-decoded, as upstream reads them. */
  extra?: Record<string, string[]>;
}

/** Turns the requested identity into the server's caller; throws a StatusError to refuse it. */
export type ImpersonationResolver = (
  request: ImpersonationRequest,
  impersonator: UserInfo,
) => UserInfo | Promise<UserInfo>;

/** True when any Impersonate-* header came: a cheap test before the headers are read one by one. */
export function hasImpersonationHeaders(request: IncomingMessage): boolean {
  const headers = request.headers;
  if (headers[IMPERSONATE_USER] !== undefined || headers[IMPERSONATE_GROUP] !== undefined) return true;
  if (headers[IMPERSONATE_UID] !== undefined) return true;
  for (const name in headers) if (name.startsWith(IMPERSONATE_EXTRA_PREFIX)) return true;
  return false;
}

/** The impersonation a request asks for, or undefined; 400 for one that cannot be carried out. */
export function impersonationRequested(request: IncomingMessage): ImpersonationRequest | undefined {
  if (!hasImpersonationHeaders(request)) return undefined;
  const headers = request.headersDistinct;
  const user = headers[IMPERSONATE_USER]?.[0] ?? "";
  const groups = headers[IMPERSONATE_GROUP];
  const uid = headers[IMPERSONATE_UID]?.[0] ?? "";
  let extra: Record<string, string[]> | undefined;
  for (const name of Object.keys(headers)) {
    if (!name.startsWith(IMPERSONATE_EXTRA_PREFIX)) continue;
    const key = extraKey(name.slice(IMPERSONATE_EXTRA_PREFIX.length));
    if (!key) throw errors.badRequest(`${name}: the header names no extra key`);
    extra ??= {};
    extra[key] = [...(extra[key] ?? []), ...(headers[name] ?? [])];
  }
  if (!user) {
    if (groups === undefined && !uid && extra === undefined) return undefined;
    throw errors.badRequest(
      "requested impersonation of groups, a uid or extra fields without impersonating a user (Impersonate-User)",
    );
  }
  if (groups?.some((group) => group === "")) throw errors.badRequest("Impersonate-Group must not be empty");
  const requested: ImpersonationRequest = { user };
  const account = serviceAccountOf(user);
  if (account) requested.serviceAccount = account;
  if (groups !== undefined) requested.groups = [...groups];
  if (uid) requested.uid = uid;
  if (extra) requested.extra = extra;
  return requested;
}

/** The caller's rights to each part of the impersonation, in upstream's order; the first refused one is a 403. */
export async function authorizeImpersonation(
  authorizer: Authorizer,
  impersonator: UserInfo,
  request: ImpersonationRequest,
): Promise<void> {
  for (const attributes of impersonationAttributes(impersonator, request)) {
    await authorizeAttributes(authorizer, attributes);
  }
}

/** The checks an impersonation needs: one per part (each group, each extra value). */
export function impersonationAttributes(user: UserInfo, request: ImpersonationRequest): AuthorizationAttributes[] {
  const check = (group: string, resource: string, name: string, more: Partial<AuthorizationAttributes> = {}) => ({
    user,
    verb: "impersonate",
    group,
    version: "v1",
    resource,
    name,
    resourceRequest: true,
    ...more,
  });
  const account = request.serviceAccount;
  const checks: AuthorizationAttributes[] = [
    account
      ? check("", "serviceaccounts", account.name, { namespace: account.namespace })
      : check("", "users", request.user),
  ];
  for (const group of request.groups ?? []) checks.push(check("", "groups", group));
  for (const [key, values] of Object.entries(request.extra ?? {})) {
    for (const value of values) checks.push(check(AUTHENTICATION_GROUP, "userextras", value, { subresource: key }));
  }
  if (request.uid !== undefined) checks.push(check(AUTHENTICATION_GROUP, "uids", request.uid));
  return checks;
}

/**
 * The identity as kube-apiserver builds it: the requested name, uid and extra; the requested groups, or a service
 * account's own groups when none were requested; and system:authenticated (system:unauthenticated for
 * system:anonymous) unless the groups already say which.
 */
export function kubernetesImpersonatedUser(request: ImpersonationRequest): UserInfo {
  const account = request.serviceAccount;
  const groups = [
    ...(request.groups ?? (account ? ["system:serviceaccounts", `system:serviceaccounts:${account.namespace}`] : [])),
  ];
  if (request.user === ANONYMOUS) {
    if (!groups.includes(UNAUTHENTICATED)) groups.push(UNAUTHENTICATED);
  } else if (!groups.includes(AUTHENTICATED) && !groups.includes(UNAUTHENTICATED)) {
    groups.push(AUTHENTICATED);
  }
  const user: UserInfo = { name: request.user, groups };
  if (request.uid !== undefined) user.uid = request.uid;
  if (request.extra) user.extra = request.extra;
  return Object.freeze(user);
}

/** Removes the Impersonate-* headers once they are handled, as upstream does: nothing after sees them. */
export function dropImpersonationHeaders(request: IncomingMessage): void {
  const headers = request.headers;
  for (const name of Object.keys(headers)) if (name.startsWith("impersonate-")) delete headers[name];
}

/** `Impersonate-Extra-Scopes` -> `scopes`; percent-escapes decoded (a key may hold characters a header name may not). */
function extraKey(raw: string): string {
  const lower = raw.toLowerCase();
  try {
    return decodeURIComponent(lower);
  } catch {
    return lower;
  }
}

function serviceAccountOf(user: string): ImpersonationRequest["serviceAccount"] {
  if (!user.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = user.slice(SERVICE_ACCOUNT_PREFIX.length).split(":");
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts;
  return DNS_LABEL.test(namespace) && DNS_SUBDOMAIN.test(name) ? { namespace, name } : undefined;
}
