// Authentication contract. Authenticators run in order; the first that recognizes the credentials wins.

import type { UserInfo } from "../registry/types.ts";

export interface AuthenticationRequest {
  headers: Record<string, string | string[] | undefined>;
  /**
   * The token of `Authorization: Bearer <token>`, parsed once for all authenticators ("" for a malformed Bearer
   * header, undefined for none). Absent: authenticators parse the header themselves (requestBearerToken).
   */
  bearerToken?: string | undefined;
  remoteAddress?: string;
  /** Lives exactly as long as the client's connection (its socket): lets authenticators remember per connection. */
  connection?: object;
  /** DER of the verified TLS client certificate, when one was presented. */
  clientCertificate?: Buffer;
}

export interface Authenticator {
  /**
   * Returns the caller, or undefined when the request carries no credentials of this authenticator's kind.
   * Throws (or rejects with) a 401 StatusError (errors.unauthorized) when it carries such credentials but they are
   * not valid. May answer synchronously: most requests are not for most authenticators, and this runs per request.
   */
  authenticate(request: AuthenticationRequest): Promise<UserInfo | undefined> | UserInfo | undefined;
}
