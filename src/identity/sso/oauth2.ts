// The plain OAuth 2.0 authorization-code steps the code-host and idpB connectors share: the authorization URL and
// the code-for-token exchange (form-encoded, JSON answer asked for).

import type { ProviderHttp } from "./provider-http.ts";
import { SsoFailure } from "./types.ts";

export function authorizationUrl(endpoint: string, params: Record<string, string>): string {
  const url = new URL(endpoint);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}

/** The provider's error on the callback, or its code. */
export function callbackCode(params: Record<string, string>): string {
  if (params.error) {
    const description = (params.error_description ?? "").slice(0, 200);
    throw new SsoFailure(`the provider refused the login: ${params.error}${description ? ` (${description})` : ""}`);
  }
  if (!params.code) throw new SsoFailure("the provider's callback carries no authorization code");
  return params.code;
}

/** Exchanges the code; resolves to the access token (never logged or stored). */
export async function exchangeCode(
  http: ProviderHttp,
  tokenUrl: string,
  form: Record<string, string>,
): Promise<string> {
  const answer = await http.json<{ access_token?: unknown; error?: unknown }>(tokenUrl, {
    form: { grant_type: "authorization_code", ...form },
  });
  if (typeof answer.error === "string")
    throw new SsoFailure(`the provider refused the code: ${answer.error.slice(0, 64)}`);
  if (typeof answer.access_token !== "string" || !answer.access_token) {
    throw new SsoFailure("the provider's token answer has no access_token");
  }
  return answer.access_token;
}
