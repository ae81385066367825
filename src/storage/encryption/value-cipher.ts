// Encryption of stored values at rest: AES-256-GCM under a key-encryption key kept outside the store.
//
// An encrypted value is text (values are strings in the storage contract):
//   enc:aesgcm:v1:<key id>:<base64url(12-byte nonce ‖ ciphertext ‖ 16-byte tag)>
// The key id names the key that sealed it, so several keys can be readable at once while a rotation re-encrypts.
// The storage key is the additional authenticated data: a sealed value copied to another key (say one user's
// password hash onto another user) fails to open. Nonces are random; a key seals far fewer than the 2^32 values
// that makes safe, because only secret material (a few values per user, instance and rotation) is encrypted.

import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

export const ENCRYPTED_VALUE_PREFIX = "enc:aesgcm:v1:";
export const ENCRYPTION_KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Why a stored value could not be opened; the message names the storage key, never the value. */
export class ValueDecryptionError extends Error {
  readonly storageKey: string;
  /** The id the value names, when it names one. */
  readonly keyId?: string;

  constructor(storageKey: string, message: string, keyId?: string) {
    super(message);
    this.name = "ValueDecryptionError";
    this.storageKey = storageKey;
    this.keyId = keyId;
  }
}

/** A key's id: derived from the key, so the same key always has the same id, and saying it reveals nothing. */
export function encryptionKeyId(key: Uint8Array): string {
  return `k${createHash("sha256").update("virtualcluster-platform encryption key id\0").update(key).digest("hex").slice(0, 12)}`;
}

export function isEncryptedValue(value: string): boolean {
  return value.startsWith(ENCRYPTED_VALUE_PREFIX);
}

/** The id of the key that sealed an encrypted value (undefined for a plain value). */
export function sealingKeyId(value: string): string | undefined {
  if (!isEncryptedValue(value)) return undefined;
  const end = value.indexOf(":", ENCRYPTED_VALUE_PREFIX.length);
  return end === -1 ? undefined : value.slice(ENCRYPTED_VALUE_PREFIX.length, end);
}

export class ValueCipher {
  readonly #keys = new Map<string, Buffer>();
  readonly #primary: string;

  /** `keys`: raw 32-byte keys; the first seals, every one opens. */
  constructor(keys: readonly Uint8Array[]) {
    if (keys.length === 0) throw new Error("at least one encryption key is needed");
    for (const key of keys) {
      if (key.length !== ENCRYPTION_KEY_BYTES) {
        throw new Error(`an encryption key must be ${ENCRYPTION_KEY_BYTES} bytes, not ${key.length}`);
      }
      this.#keys.set(encryptionKeyId(key), Buffer.from(key));
    }
    this.#primary = encryptionKeyId(keys[0]);
  }

  /** Id of the key that seals new values. */
  get primaryKeyId(): string {
    return this.#primary;
  }

  /** Ids of every key that opens values, the primary first. */
  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  seal(storageKey: string, plaintext: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#keys.get(this.#primary)!, nonce);
    cipher.setAAD(Buffer.from(storageKey));
    const body = Buffer.concat([nonce, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${ENCRYPTED_VALUE_PREFIX}${this.#primary}:${body.toString("base64url")}`;
  }

  /** Opens a value sealed for `storageKey`; throws ValueDecryptionError for a plain, unknown-key or tampered value. */
  open(storageKey: string, value: string): string {
    const keyId = sealingKeyId(value);
    if (keyId === undefined) throw new ValueDecryptionError(storageKey, `the value at ${storageKey} is not encrypted`);
    const key = this.#keys.get(keyId);
    if (!key) {
      throw new ValueDecryptionError(
        storageKey,
        `the value at ${storageKey} was encrypted with key ${keyId}, which is not among the platform's encryption keys (${this.keyIds.join(", ")})`,
        keyId,
      );
    }
    const body = Buffer.from(value.slice(ENCRYPTED_VALUE_PREFIX.length + keyId.length + 1), "base64url");
    if (body.length < NONCE_BYTES + TAG_BYTES) {
      throw new ValueDecryptionError(storageKey, `the encrypted value at ${storageKey} is truncated`, keyId);
    }
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(storageKey));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new ValueDecryptionError(
        storageKey,
        `the encrypted value at ${storageKey} failed authentication: it was changed, or sealed for another key`,
        keyId,
      );
    }
  }
}
