// The OpenID Connect relying party the OIDC and idpA connectors share: discovery, the authorization-code flow with
// PKCE (S256) and a nonce, the token request, and ID token verification against the provider's JWKS (issuer,
// audience = client id, expiry, nonce, authorized party). Discovery and keys are cached; an unknown key id refetches
// the JWKS (at most every 30 s), so a provider's key rotation is followed without a restart.

import { createHash, randomBytes } from "node:crypto";
import { createLocalJWKSet, type JSONWebKeySet, type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import { type ProviderHttp, providerUrl } from "./provider-http.ts";
import { type ConnectorState, SsoFailure } from "./types.ts";

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const JWKS_REFETCH_MS = 30_000;
const CLOCK_TOLERANCE_S = 30;

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
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  end_session_endpoint?: string;
}

export interface OidcTokens {
  claims: JWTPayload;
  accessToken?: string;
}

const base64url = (bytes: Buffer) => bytes.toString("base64url");

export class OidcClient {
  private readonly options: OidcClientOptions;
  private discovery: { value: Discovery; at: number } | undefined;
  private jwks: { value: ReturnType<typeof createLocalJWKSet>; at: number } | undefined;
  private lastRefresh = 0;

  constructor(options: OidcClientOptions) {
    this.options = options;
  }

  async metadata(): Promise<Discovery> {
    if (this.discovery && Date.now() - this.discovery.at < DISCOVERY_TTL_MS) return this.discovery.value;
    const issuer = this.options.issuer.replace(/\/+$/, "");
    const doc = await this.options.http.json<Partial<Discovery>>(
      providerUrl(`${issuer}/.well-known/openid-configuration`),
    );
    // The issuer in the document must be the configured one (OpenID Connect Discovery 1.0, section 4.3).
    if (typeof doc.issuer !== "string" || doc.issuer.replace(/\/+$/, "") !== issuer) {
      throw new SsoFailure(
        `the provider's discovery document names issuer ${JSON.stringify(doc.issuer)}, not ${issuer}`,
      );
    }
    for (const field of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
      if (typeof doc[field] !== "string" || !URL.canParse(doc[field])) {
        throw new SsoFailure(`the provider's discovery document has no valid ${field}`);
      }
    }
    const value = doc as Discovery;
    this.discovery = { value, at: Date.now() };
    return value;
  }

  /** The authorization URL and what the callback needs to finish (PKCE verifier, nonce). */
  async authorizationUrl(state: string, redirectUri: string): Promise<{ url: string; state: ConnectorState }> {
    const meta = await this.metadata();
    const verifier = base64url(randomBytes(32));
    const nonce = base64url(randomBytes(16));
    const url = new URL(meta.authorization_endpoint);
    const params: Record<string, string> = {
      response_type: "code",
      client_id: this.options.clientId,
      redirect_uri: redirectUri,
      scope: this.options.scopes.join(" "),
      state,
      nonce,
      code_challenge: base64url(createHash("sha256").update(verifier).digest()),
      code_challenge_method: "S256",
      ...this.options.authorizeParams,
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return { url: url.toString(), state: { verifier, nonce } };
  }

  /** Exchanges the code and verifies the ID token. */
  async finish(params: Record<string, string>, state: ConnectorState, redirectUri: string): Promise<OidcTokens> {
    if (params.error) {
      const description = (params.error_description ?? "").slice(0, 200);
      throw new SsoFailure(`the provider refused the login: ${params.error}${description ? ` (${description})` : ""}`);
    }
    if (!params.code) throw new SsoFailure("the provider's callback carries no authorization code");
    const meta = await this.metadata();
    const form: Record<string, string> = {
      grant_type: "authorization_code",
      code: params.code,
      redirect_uri: redirectUri,
      client_id: this.options.clientId,
      code_verifier: state.verifier ?? "",
      ...this.options.tokenParams,
    };
    if (this.options.clientSecret) form.client_secret = this.options.clientSecret;
    const tokens = await this.options.http.json<{ id_token?: unknown; access_token?: unknown }>(meta.token_endpoint, {
      form,
    });
    if (typeof tokens.id_token !== "string") throw new SsoFailure("the provider's token answer has no id_token");
    const claims = await this.verifyIdToken(tokens.id_token, state.nonce ?? "");
    return { claims, accessToken: typeof tokens.access_token === "string" ? tokens.access_token : undefined };
  }

  async verifyIdToken(token: string, nonce: string): Promise<JWTPayload> {
    const claims = await this.verifyJwt(token);
    if (claims.nonce !== nonce || !nonce) throw new SsoFailure("the provider's ID token has the wrong nonce");
    // Several audiences: the authorized party must be this client (OpenID Connect Core 3.1.3.7).
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== this.options.clientId) {
      throw new SsoFailure("the provider's ID token was issued to another party (azp)");
    }
    return claims;
  }

  /**
   * A JWT the provider signed for this client, as a bearer token (no nonce): signature against the provider's JWKS
   * (refetched for an unknown key id), issuer, audience, expiry.
   */
  async verifyJwt(token: string): Promise<JWTPayload> {
    const meta = await this.metadata();
    const verify = async (keys: ReturnType<typeof createLocalJWKSet>) =>
      (
        await jwtVerify(token, keys, {
          issuer: meta.issuer,
          audience: this.options.clientId,
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ["sub", "exp", "iat"],
        })
      ).payload;
    let claims: JWTPayload;
    try {
      try {
        claims = await verify(await this.keys(false));
      } catch (error) {
        if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
        claims = await verify(await this.keys(true));
      }
    } catch (error) {
      if (error instanceof SsoFailure) throw error;
      throw new SsoFailure(`the provider's ID token is not valid: ${idTokenProblem(error)}`);
    }
    return claims;
  }

  /** Claims from the userinfo endpoint; its subject must be the ID token's. */
  async userInfo(accessToken: string, subject: string): Promise<Record<string, unknown>> {
    const meta = await this.metadata();
    if (!meta.userinfo_endpoint) throw new SsoFailure("getUserInfo is set but the provider has no userinfo endpoint");
    const info = await this.options.http.json(meta.userinfo_endpoint, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    if (info.sub !== subject) throw new SsoFailure("the provider's userinfo is about another subject");
    return info;
  }

  async endSessionUrl(postLogoutRedirectUri?: string): Promise<string | undefined> {
    const meta = await this.metadata();
    if (!meta.end_session_endpoint) return undefined;
    const url = new URL(meta.end_session_endpoint);
    url.searchParams.set("client_id", this.options.clientId);
    if (postLogoutRedirectUri) url.searchParams.set("post_logout_redirect_uri", postLogoutRedirectUri);
    return url.toString();
  }

  private async keys(refresh: boolean): Promise<ReturnType<typeof createLocalJWKSet>> {
    const cached = this.jwks;
    if (cached && !refresh) return cached.value;
    // An unknown key id refetches, at most once per 30 s (a flood of bad tokens cannot hammer the provider).
    if (cached && refresh) {
      if (Date.now() - this.lastRefresh < JWKS_REFETCH_MS) return cached.value;
      this.lastRefresh = Date.now();
    }
    const meta = await this.metadata();
    const set = await this.options.http.json<JSONWebKeySet>(meta.jwks_uri);
    if (!Array.isArray(set.keys)) throw new SsoFailure("the provider's JWKS has no keys");
    const value = createLocalJWKSet(set);
    this.jwks = { value, at: Date.now() };
    return value;
  }
}

function idTokenProblem(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "it has expired";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "its signature does not verify";
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "no key of the provider's JWKS signed it";
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `claim ${error.claim} is wrong (${error.reason})`;
  if (error instanceof joseErrors.JOSEError) return error.code;
  return "it cannot be read";
}
