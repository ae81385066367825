// Test support for signed tokens: an independent JWT check (node:crypto only, no jose) against a JWKS document, and
// a fixture adding the signing key ring, the token issuer and the token authenticator to the auth fixture.

import { createPublicKey, verify } from "node:crypto";
import { SigningKeyRing } from "../auth/signing/key-ring.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import type { KeyValueStore } from "../storage/types.ts";
import { factsLookup } from "./resource-facts.ts";
import { type AuthFixture, openAuthFixture } from "./testing.ts";
import { TokenAuthenticator } from "./token-authenticator.ts";
import { TokenIssuer } from "./token-issuer.ts";

export interface IndependentResult {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

/**
 * Verifies a compact JWS with the JWKS key its kid names, by RFC 7515/7518 directly: ES256 signatures are the raw
 * 64-byte r||s, RS256 is RSASSA-PKCS1-v1_5 with SHA-256. Throws when the key is missing or the signature is wrong.
 */
export function verifyWithJwks(token: string, jwks: { keys: Record<string, unknown>[] }): IndependentResult {
  const [h, p, s] = token.split(".");
  const decode = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  const header = decode(h);
  const jwk = jwks.keys.find((key) => key.kid === header.kid);
  if (!jwk) throw new Error(`no key ${header.kid} in the JWKS`);
  if (jwk.alg !== header.alg) throw new Error(`key ${header.kid} is ${jwk.alg}, the token says ${header.alg}`);
  const key = createPublicKey({ key: jwk as never, format: "jwk" });
  const input = Buffer.from(`${h}.${p}`);
  const signature = Buffer.from(s, "base64url");
  const ok =
    header.alg === "ES256"
      ? verify("sha256", input, { key, dsaEncoding: "ieee-p1363" }, signature)
      : header.alg === "RS256" && verify("sha256", input, key, signature);
  if (!ok) throw new Error("signature does not verify");
  return { header, payload: decode(p) };
}

export interface TokenFixture extends AuthFixture {
  storage: KeyValueStore;
  ring: SigningKeyRing;
  issuer: TokenIssuer;
  tokens: TokenAuthenticator;
}

export const TEST_ISSUER = "https://platform.test";
export const TEST_MAX_TOKEN_TTL = 3600;

export async function openTokenFixture(): Promise<TokenFixture> {
  const auth = await openAuthFixture();
  const storage = await openSqliteStore({ path: ":memory:" });
  const now = () => auth.clock.now;
  const ring = await SigningKeyRing.open({ storage, maxTokenTTLSeconds: TEST_MAX_TOKEN_TTL, now });
  const fresh = () => auth.informer.fresh();
  const issuer = new TokenIssuer({ ring, index: auth.index, fresh, issuer: () => TEST_ISSUER, now });
  const limits = () => auth.settings.current().auth;
  const facts = factsLookup((group, resource) => auth.env.registry.store(group, resource)?.definition);
  const tokens = new TokenAuthenticator({ ring, index: auth.index, fresh, limits, facts, now });
  return {
    ...auth,
    storage,
    ring,
    issuer,
    tokens,
    async close() {
      await auth.close();
      await storage.close();
    },
  };
}
