// Password hashing with scrypt (node:crypto, on the libuv thread pool so the event loop keeps serving). Each hash
// records its own parameters, so they can be raised later without breaking stored passwords.

import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export interface PasswordHash extends ScryptParams {
  algorithm: "scrypt";
  /** base64 */
  salt: string;
  /** base64 */
  hash: string;
}

/** About 0.1 s and 32 MiB per hash: slow on purpose (login throughput is bounded by it). */
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const maxmem = 256 * params.N * params.r + 1024 * 1024;
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...params, maxmem }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<PasswordHash> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, params);
  return { algorithm: "scrypt", ...params, salt: salt.toString("base64"), hash: hash.toString("base64") };
}

/** Constant-time comparison of the derived key. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const expected = Buffer.from(stored.hash, "base64");
  const actual = await derive(password, Buffer.from(stored.salt, "base64"), stored);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
