// The web console's session: the Login access key in the HttpOnly cookie vcp_session. The API takes it only from
// requests that also carry the console header (X-Platform-Console): a page on another site can make a browser send
// the cookie, but not a custom header (that needs a CORS preflight, which the platform never grants), so the cookie
// alone opens nothing (no CSRF). A bearer token, when present, wins: this authenticator then stays out.

import type { AuthenticationRequest, Authenticator } from "../auth/types.ts";
import type { UserInfo } from "../registry/types.ts";

export const SESSION_COOKIE = "vcp_session";
/** Sent by the console with every API request; any non-empty value. */
export const CONSOLE_HEADER = "x-platform-console";

/** The value of one cookie in a Cookie header, or undefined. */
export function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join(";") : (header ?? "");
  for (const part of text.split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

/** Set-Cookie for the session: HttpOnly (scripts never read the key), Secure, SameSite=Lax, site-wide. */
export function sessionCookie(accessKey: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${accessKey}; Path=/; HttpOnly; Secure; SameSite=Lax${maxAgeSeconds > 0 ? `; Max-Age=${maxAgeSeconds}` : ""}`;
}

export interface SessionCookieAuthenticatorOptions {
  /** Authenticates a plain access key (401 StatusError saying why when it does not). */
  authenticateKey(accessKey: string, connection: object | undefined): Promise<UserInfo>;
}

export class SessionCookieAuthenticator implements Authenticator {
  private readonly options: SessionCookieAuthenticatorOptions;

  constructor(options: SessionCookieAuthenticatorOptions) {
    this.options = options;
  }

  authenticate(request: AuthenticationRequest): Promise<UserInfo> | undefined {
    if (request.bearerToken !== undefined || request.headers.authorization !== undefined) return undefined;
    if (!request.headers[CONSOLE_HEADER]) return undefined;
    const key = cookieValue(request.headers.cookie, SESSION_COOKIE);
    if (!key) return undefined;
    return this.options.authenticateKey(key, request.connection);
  }
}
