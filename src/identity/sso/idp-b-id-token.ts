// idpB's ID token, verified: the only source of who the person is (tid, oid). The tenant's v2.0 discovery document
// names the keys and the issuer; for the shared tenants (common, organizations, consumers) that issuer is a template
// (https://login.microsoftonline.com/{tenantid}/v2.0) filled with the token's own tid, so a token always names the
// tenant that issued it. Signature (keys refetched for an unknown key id, at most every 30 s), audience = client id,
// expiry, nonce.

import { createLocalJWKSet, type JSONWebKeySet, errors as joseErrors, jwtVerify } from "jose";
import { claimString } from "./claims.ts";
import { type ProviderHttp, providerUrl } from "./provider-http.ts";
import { SsoFailure } from "./types.ts";

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const JWKS_REFETCH_MS = 30_000;
const CLOCK_TOLERANCE_S = 30;
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface IdpBPerson {
  /** The tenant id (a GUID). */
  tid: string;
  /** The object id within the tenant: immutable, never reassigned. */
  oid: string;
}

interface Discovery {
  issuer: string;
  jwks_uri: string;
}

export class IdpBIdTokens {
  private readonly http: ProviderHttp;
  private readonly discoveryUrl: string;
  private readonly clientId: string;
  private discovery?: { value: Discovery; at: number };
  private keys?: ReturnType<typeof createLocalJWKSet>;
  private lastRefetch = 0;

  constructor(options: { http: ProviderHttp; loginBase: string; tenant: string; clientId: string }) {
    this.http = options.http;
    this.clientId = options.clientId;
    this.discoveryUrl = providerUrl(
      `${options.loginBase}/${encodeURIComponent(options.tenant)}/v2.0/.well-known/openid-configuration`,
    );
  }

  async verify(token: string, nonce: string): Promise<IdpBPerson> {
    const meta = await this.metadata();
    let claims: Record<string, unknown>;
    try {
      claims = await this.verifyWith(token, await this.keySet(false)).catch(async (error) => {
        if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
        return this.verifyWith(token, await this.keySet(true));
      });
    } catch (error) {
      if (error instanceof SsoFailure) throw error;
      const why = error instanceof joseErrors.JOSEError ? error.code : "it cannot be read";
      throw new SsoFailure(`the identity provider's ID token is not valid: ${why}`);
    }
    const tid = claimString(claims, "tid");
    const oid = claimString(claims, "oid");
    if (!tid || !TENANT_ID.test(tid) || !oid)
      throw new SsoFailure("the identity provider's ID token has no tid and oid");
    if (claims.iss !== meta.issuer.replace("{tenantid}", tid)) {
      throw new SsoFailure("the identity provider's ID token was not issued by its own tenant (iss, tid)");
    }
    if (!nonce || claims.nonce !== nonce) throw new SsoFailure("the identity provider's ID token has the wrong nonce");
    return { tid: tid.toLowerCase(), oid };
  }

  private async verifyWith(token: string, keys: ReturnType<typeof createLocalJWKSet>) {
    const { payload } = await jwtVerify(token, keys, {
      audience: this.clientId,
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ["iss", "exp", "iat"],
    });
    return payload as Record<string, unknown>;
  }

  private async metadata(): Promise<Discovery> {
    if (this.discovery && Date.now() - this.discovery.at < DISCOVERY_TTL_MS) return this.discovery.value;
    const doc = await this.http.json<Partial<Discovery>>(this.discoveryUrl);
    if (typeof doc.issuer !== "string" || typeof doc.jwks_uri !== "string" || !URL.canParse(doc.jwks_uri)) {
      throw new SsoFailure("the identity provider's discovery document has no issuer and jwks_uri");
    }
    this.discovery = { value: doc as Discovery, at: Date.now() };
    return this.discovery.value;
  }

  private async keySet(refetch: boolean): Promise<ReturnType<typeof createLocalJWKSet>> {
    if (this.keys && !refetch) return this.keys;
    if (this.keys && Date.now() - this.lastRefetch < JWKS_REFETCH_MS) return this.keys;
    this.lastRefetch = Date.now();
    const set = await this.http.json<JSONWebKeySet>(providerUrl((await this.metadata()).jwks_uri));
    if (!Array.isArray(set.keys)) throw new SsoFailure("the identity provider's key set has no keys");
    this.keys = createLocalJWKSet(set);
    return this.keys;
  }
}
