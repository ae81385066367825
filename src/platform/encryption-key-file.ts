// The key-encryption keys of secret values in the store (see src/storage/encryption/). They live outside the store,
// by default in `<data-dir>/pki/encryption.key` (made on first start, 0600), or in a file the operator supplies
// with --encryption-key-file. A copy of platform.db without this file yields no secret.
//
// Format: one key per line, base64 (standard or URL alphabet) of 32 random bytes, e.g. `openssl rand -base64 32`.
// The first key seals new values; every key listed opens values. Blank lines and `#` comments are ignored.
// Written atomically (a temporary file, fsync, rename) so a crash never leaves a half-written key file.

import { randomBytes } from "node:crypto";
import { link, open, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ENCRYPTION_KEY_BYTES } from "../storage/encryption/value-cipher.ts";

const HEADER = [
  "# virtualcluster-platform: keys that encrypt secret values in the store (AES-256-GCM), one base64 key per line.",
  "# The first key encrypts; every key listed decrypts. Back this file up apart from platform.db and keep it 0600:",
  "# without it the signing keys, instance CA keys, passwords and Config secrets in the store cannot be read.",
];

export class EncryptionKeyFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EncryptionKeyFileError";
  }
}

/** Parses a key file's text; errors name the file and line, never a key. */
export function parseEncryptionKeys(text: string, file: string): Uint8Array[] {
  const keys: Uint8Array[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const where = `${file} line ${index + 1}`;
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(line)) {
      throw new EncryptionKeyFileError(`${where} is not a base64 key (one key per line; "#" starts a comment)`);
    }
    const key = Buffer.from(line, line.includes("-") || line.includes("_") ? "base64url" : "base64");
    if (key.length !== ENCRYPTION_KEY_BYTES) {
      throw new EncryptionKeyFileError(
        `${where} holds a ${key.length}-byte key; keys are ${ENCRYPTION_KEY_BYTES} random bytes in base64 (openssl rand -base64 32)`,
      );
    }
    keys.push(key);
  }
  if (keys.length === 0) throw new EncryptionKeyFileError(`${file} holds no encryption key`);
  return keys;
}

export function formatEncryptionKeys(keys: readonly Uint8Array[]): string {
  return `${[...HEADER, ...keys.map((key) => Buffer.from(key).toString("base64"))].join("\n")}\n`;
}

export function generateEncryptionKey(): Uint8Array {
  return randomBytes(ENCRYPTION_KEY_BYTES);
}

/** The keys in the file, the sealing key first; undefined when the file does not exist. */
export async function readEncryptionKeys(file: string): Promise<Uint8Array[] | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return parseEncryptionKeys(text, file);
}

/** Replaces (or, with `exclusive`, creates) the key file atomically, mode 0600. */
export async function writeEncryptionKeys(
  file: string,
  keys: readonly Uint8Array[],
  options: { exclusive?: boolean } = {},
): Promise<void> {
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  const handle = await open(temporary, "w", 0o600);
  try {
    await handle.writeFile(formatEncryptionKeys(keys));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    if (options.exclusive) {
      // link() fails if the file appeared meanwhile: two first starts never make two different keys.
      await link(temporary, file);
      await rm(temporary);
    } else {
      await rename(temporary, file);
    }
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  // The rename is durable only once the directory is.
  const directory = await open(dirname(file), "r");
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
