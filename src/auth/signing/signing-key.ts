// One signing key of the platform: an ES256 (P-256) or RS256 (RSA 2048) key pair. Stored as JSON with the private key
// as a JWK (only ever under /internal/, never served); its id is the RFC 7638 thumbprint of the public key, so the
// same key always has the same kid and two keys never share one.

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  type JsonWebKey,
  type KeyObject,
} from "node:crypto";
import { promisify } from "node:util";

export const SIGNING_ALGORITHMS = ["ES256", "RS256"] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];
export const DEFAULT_SIGNING_ALGORITHM: SigningAlgorithm = "ES256";

/** The stored form (value of `/internal/signingkeys/<kid>`). Times are epoch milliseconds. */
export interface StoredSigningKey {
  kid: string;
  alg: SigningAlgorithm;
  createdAt: number;
  /** When a newer key replaced it; it signs nothing after that. */
  retiredAt?: number;
  /** Published until then: every token it signed has expired by now. */
  publishUntil?: number;
  privateJwk: JsonWebKey;
}

/** A public key as JWKS publishes it. */
export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: SigningAlgorithm;
  use: "sig";
}

export interface SigningKey {
  readonly stored: StoredSigningKey;
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly publicJwk: PublicJwk;
}

const generate = promisify(generateKeyPair);

/** Members of the thumbprint input, in the lexicographic order RFC 7638 requires. */
const THUMBPRINT_MEMBERS: Record<string, string[]> = { EC: ["crv", "kty", "x", "y"], RSA: ["e", "kty", "n"] };

function thumbprint(jwk: JsonWebKey): string {
  const members = THUMBPRINT_MEMBERS[jwk.kty ?? ""];
  if (!members) throw new Error(`unsupported key type ${jwk.kty}`);
  const canonical = JSON.stringify(Object.fromEntries(members.map((m) => [m, (jwk as Record<string, unknown>)[m]])));
  return createHash("sha256").update(canonical).digest("base64url");
}

export async function generateSigningKey(alg: SigningAlgorithm, nowMs: number): Promise<StoredSigningKey> {
  const { privateKey } =
    alg === "ES256"
      ? await generate("ec", { namedCurve: "P-256" })
      : await generate("rsa", { modulusLength: 2048, publicExponent: 0x10001 });
  const privateJwk = privateKey.export({ format: "jwk" });
  return { kid: thumbprint(privateJwk), alg, createdAt: nowMs, privateJwk };
}

export function loadSigningKey(stored: StoredSigningKey): SigningKey {
  if (!SIGNING_ALGORITHMS.includes(stored.alg)) throw new Error(`unsupported signing algorithm ${stored.alg}`);
  const privateKey = createPrivateKey({ key: stored.privateJwk, format: "jwk" });
  const publicKey = createPublicKey(privateKey);
  const { kty, crv, x, y, n, e } = publicKey.export({ format: "jwk" });
  const fields = stored.alg === "ES256" ? { kty, crv, x, y } : { kty, n, e };
  return {
    stored,
    kid: stored.kid,
    alg: stored.alg,
    privateKey,
    publicKey,
    publicJwk: { ...fields, kid: stored.kid, alg: stored.alg, use: "sig" },
  };
}
