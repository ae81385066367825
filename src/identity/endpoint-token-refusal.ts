// The management API refuses direct cluster endpoint tokens. They are issued for virtual clusters' endpoints: a
// token valid for days must not also create admin users or edit the platform Config. A bearer token recognized as
// one gets a 401 that says so, never falls through to the access key authenticator (whose "invalid key" would
// mislead). Token review through selves reads the token from its body and still accepts it.

import { errors } from "../apimachinery/errors.ts";
import { requestBearerToken } from "../auth/access-key-material.ts";
import type { Authenticator } from "../auth/types.ts";
import type { TokenAuthenticator } from "./token-authenticator.ts";

export const ENDPOINT_TOKEN_REFUSED =
  "this is a direct cluster endpoint token: it is for virtual cluster endpoints, not the management API; use an access key";

export function refuseEndpointTokens(tokens: TokenAuthenticator): Authenticator {
  return {
    authenticate(request) {
      const token = requestBearerToken(request);
      if (!token || !tokens.recognizes(token)) return undefined;
      return Promise.reject(errors.unauthorized(ENDPOINT_TOKEN_REFUSED));
    },
  };
}
