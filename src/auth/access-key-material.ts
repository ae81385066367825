// Access key material. Keys carry 256 random bits, so a plain SHA-256 digest is enough to store them safely
// (a slow hash such as scrypt protects low-entropy passwords, not random keys) and lets us look a key up by digest.

import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AuthenticationRequest } from "./types.ts";

/** A new access key: 43 URL-safe characters (256 bits). */
export function generateAccessKey(): string {
  return randomBytes(32).toString("base64url");
}

export function digestAccessKey(key: string): string {
  // The one-shot hash: a quarter of createHash()'s cost, and this runs on every request.
  return hash("sha256", key, "hex");
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** The bearer token of an authentication request: the one parsed for all authenticators, else from its header. */
export function requestBearerToken(request: AuthenticationRequest): string | undefined {
  return "bearerToken" in request ? request.bearerToken : bearerToken(request.headers.authorization);
}

/** Extracts the token of an `Authorization: Bearer <token>` header; undefined when there is none. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match ? match[1] : "";
}
