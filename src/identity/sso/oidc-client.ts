// The OpenID Connect relying party the OIDC, idpA and idpB connectors share, on `openid-client`: discovery (the
// document's issuer must be the configured one, except Microsoft's templated multi-tenant issuer, which the library
// checks against each token's tid), the authorization-code flow with PKCE (S256) and a nonce, the token request,
// and ID token verification against the provider's JWKS (issuer, audience = client id, expiry, nonce, authorized
// party). Every request goes through the connector's ProviderHttp (its trust, limits and test endpoints). Discovery
// is cached for an hour; the library caches the keys and refetches them for an unknown key id once the cached set
// is a minute old (a flood of bad tokens cannot hammer the provider). verifyJwt() checks a bearer JWT the provider
// signed for this client (the virtual cluster's OIDC authentication), with jose's remote key set.

import { createRemoteJWKSet, customFetch, type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import type * as OpenidClient from "openid-client";
import type { ProviderHttp } from "./provider-http.ts";
import { type ConnectorState, SsoFailure } from "./types.ts";

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const CLOCK_TOLERANCE_S = 30;

// openid-client (and oauth4webapi under it) loads with the first use of a provider, not with the platform: an idle
// platform, and one without OpenID Connect connectors, held it for nothing (issue 36).
let library: typeof OpenidClient | undefined;
async function openidClient(): Promise<typeof OpenidClient> {
  library ??= await import("openid-client");
  return library;
}

export interface OidcClientOptions {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  scopes: string[];
  http: ProviderHttp;
  /** Extra parameters of the authorization request (idpA's `hd`). */
  authorizeParams?: Record<string, string>;
  /** Extra parameters of the token request (the config's `resource`). */
  tokenParams?: Record<string, string>;
  /** Where the browser is sent instead of the discovered authorization endpoint's origin (test endpoints). */
  browserUrl?: (url: string) => string;
}

export interface OidcTokens {
  claims: JWTPayload;
  accessToken?: string;
}

export class OidcClient {
  private readonly options: OidcClientOptions;
  private discovered: { value: OpenidClient.Configuration; at: number } | undefined;
  private keySet: { uri: string; keys: ReturnType<typeof createRemoteJWKSet> } | undefined;

  constructor(options: OidcClientOptions) {
    this.options = options;
  }

  /** The provider's configuration after discovery (cached for an hour). */
  async configuration(): Promise<OpenidClient.Configuration> {
    const cached = this.discovered;
    if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.value;
    const client = await openidClient();
    const { issuer, clientId, clientSecret, http } = this.options;
    if (!URL.canParse(issuer)) throw new SsoFailure(`the issuer ${JSON.stringify(issuer)} is not an address`);
    const server = new URL(issuer.replace(/\/+$/, ""));
    let value: OpenidClient.Configuration;
    try {
      value = await client.discovery(
        server,
        clientId,
        { [client.clockTolerance]: CLOCK_TOLERANCE_S },
        clientSecret ? client.ClientSecretPost(clientSecret) : client.None(),
        {
          [client.customFetch]: http.fetch,
          // The config accepts http issuers (a development provider); https is still the norm.
          ...(server.protocol === "http:" ? { execute: [client.allowInsecureRequests] } : {}),
        },
      );
    } catch (error) {
      throw failure("the provider's discovery document cannot be used", error);
    }
    value[client.customFetch] = http.fetch;
    // The library trusts an ID token from the token endpoint on TLS alone (OpenID Connect Core 3.1.3.7 allows it);
    // its signature is checked too, so a provider reached with insecureCa, or a proxy, cannot forge one.
    client.enableNonRepudiationChecks(value);
    // Keys the previous configuration had fetched stay valid across the hourly rediscovery.
    if (cached) {
      const keys = client.getJwksCache(cached.value);
      if (keys) client.setJwksCache(value, keys);
    }
    this.discovered = { value, at: Date.now() };
    return value;
  }

  /** The authorization URL and what the callback needs to finish (PKCE verifier, nonce). */
  async authorizationUrl(state: string, redirectUri: string): Promise<{ url: string; state: ConnectorState }> {
    const config = await this.configuration();
    const client = await openidClient();
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.options.scopes.join(" "),
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      ...this.options.authorizeParams,
    });
    const href = this.options.browserUrl?.(url.href) ?? url.href;
    return { url: href, state: { verifier, nonce } };
  }

  /**
   * Exchanges the code and verifies the ID token. The OAuth state was checked before this is called (the platform's
   * pending login, bound to the browser), so the library's own state check is skipped.
   */
  async finish(params: Record<string, string>, state: ConnectorState, redirectUri: string): Promise<OidcTokens> {
    if (params.error) {
      const description = (params.error_description ?? "").slice(0, 200);
      throw new SsoFailure(`the provider refused the login: ${params.error}${description ? ` (${description})` : ""}`);
    }
    if (!params.code) throw new SsoFailure("the provider's callback carries no authorization code");
    const config = await this.configuration();
    const client = await openidClient();
    const callback = new URL(redirectUri);
    for (const [name, value] of Object.entries(params)) callback.searchParams.set(name, value);
    try {
      const tokens = await client.authorizationCodeGrant(
        config,
        callback,
        {
          pkceCodeVerifier: state.verifier ?? "",
          expectedNonce: state.nonce ?? "",
          expectedState: client.skipStateCheck,
          idTokenExpected: true,
        },
        this.options.tokenParams,
      );
      const claims = tokens.claims();
      if (!claims) throw new SsoFailure("the provider's token answer has no id_token");
      return { claims, accessToken: tokens.access_token || undefined };
    } catch (error) {
      if (error instanceof client.ResponseBodyError) {
        throw new SsoFailure(`the provider refused the code: ${error.error.slice(0, 64)}`);
      }
      throw failure("the provider's ID token is not valid", error);
    }
  }

  /** Claims from the userinfo endpoint; its subject must be the ID token's. */
  async userInfo(accessToken: string, subject: string): Promise<Record<string, unknown>> {
    const config = await this.configuration();
    if (!config.serverMetadata().userinfo_endpoint) {
      throw new SsoFailure("getUserInfo is set but the provider has no userinfo endpoint");
    }
    const client = await openidClient();
    try {
      return { ...(await client.fetchUserInfo(config, accessToken, subject)) };
    } catch (error) {
      throw failure("the provider's userinfo cannot be used", error);
    }
  }

  async endSessionUrl(postLogoutRedirectUri?: string): Promise<string | undefined> {
    const config = await this.configuration();
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    const parameters: Record<string, string> = postLogoutRedirectUri
      ? { post_logout_redirect_uri: postLogoutRedirectUri }
      : {};
    return (await openidClient()).buildEndSessionUrl(config, parameters).href;
  }

  /**
   * A JWT the provider signed for this client, as a bearer token (no nonce): signature against the provider's JWKS
   * (refetched for an unknown key id, at most every 30 s), issuer, audience, expiry.
   */
  async verifyJwt(token: string): Promise<JWTPayload> {
    const metadata = (await this.configuration()).serverMetadata();
    if (!metadata.jwks_uri) throw new SsoFailure("the provider's discovery document has no jwks_uri");
    if (this.keySet?.uri !== metadata.jwks_uri) {
      const keys = createRemoteJWKSet(new URL(metadata.jwks_uri), { [customFetch]: this.options.http.fetch });
      this.keySet = { uri: metadata.jwks_uri, keys };
    }
    try {
      const { payload } = await jwtVerify(token, this.keySet.keys, {
        issuer: metadata.issuer,
        audience: this.options.clientId,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ["sub", "exp", "iat"],
      });
      return payload;
    } catch (error) {
      throw failure("the provider's ID token is not valid", error);
    }
  }
}

/** An SsoFailure saying what failed (never a token, a code or a secret: only the library's codes and claim names). */
function failure(what: string, error: unknown): SsoFailure {
  if (error instanceof SsoFailure) return error;
  const cause = (error as { cause?: unknown })?.cause;
  if (cause instanceof SsoFailure) return cause;
  return new SsoFailure(`${what}: ${problem(error)}`);
}

function problem(error: unknown): string {
  const client = library; // loaded by now: its errors come only from its own calls
  if (client && error instanceof client.ResponseBodyError) return `the provider answered ${error.error}`;
  if (client && error instanceof client.AuthorizationResponseError) {
    return `the provider refused the login: ${error.error}`;
  }
  if (client && error instanceof client.ClientError) {
    if (error.cause instanceof Response) return `the provider answered HTTP ${error.cause.status}`;
    const inner = error.cause as { code?: string; cause?: { claim?: unknown } } | undefined;
    const claim = inner?.cause?.claim;
    switch (error.code) {
      case "OAUTH_JWT_TIMESTAMP_CHECK_FAILED":
        return claim === "exp" ? "it has expired" : `claim ${String(claim)} is out of range`;
      case "OAUTH_JWT_CLAIM_COMPARISON_FAILED":
        if (claim === "nonce") return "it has the wrong nonce";
        if (claim === "azp" || (claim === "aud" && /additional/.test(String((inner as Error)?.message)))) {
          return "it was issued to another party (azp)";
        }
        return `claim ${String(claim)} is wrong`;
      case "OAUTH_KEY_SELECTION_FAILED":
        return "no key of the provider's JWKS signed it";
      case "OAUTH_INVALID_RESPONSE":
        return /signature/.test(String((inner as Error)?.message))
          ? "its signature does not verify"
          : String((inner as Error)?.message ?? error.message);
      case "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED":
        return "the discovered issuer is not the configured one";
      default:
        return error.code ?? error.message;
    }
  }
  if (error instanceof joseErrors.JWTExpired) return "it has expired";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "its signature does not verify";
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "no key of the provider's JWKS signed it";
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `claim ${error.claim} is wrong (${error.reason})`;
  if (error instanceof joseErrors.JOSEError) return error.code;
  return "it cannot be read";
}
