// Authentication contract. Authenticators run in order; the first that recognizes the credentials wins.

import type { UserInfo } from "../registry/types.ts";

export interface AuthenticationRequest {
  headers: Record<string, string | string[] | undefined>;
  remoteAddress?: string;
  /** DER of the verified TLS client certificate, when one was presented. */
  clientCertificate?: Buffer;
}

export interface Authenticator {
  /**
   * Returns the caller, or undefined when the request carries no credentials of this authenticator's kind.
   * Throws a 401 StatusError (errors.unauthorized) when it carries such credentials but they are not valid.
   */
  authenticate(request: AuthenticationRequest): Promise<UserInfo | undefined>;
}
