// Encryption at rest of the platform's secret values: which keys are secret, the key file, the start-up migration
// and online key rotation. The mechanism itself (AES-256-GCM per value, the store decorator) is
// src/storage/encryption/.
//
// Start: load (or on first start make) the key file; seal every plain secret value an older version stored and
// re-seal values of keys listed after the first; if anything changed, compact the store's history so no plain or
// retired copy stays in platform.db. A value sealed by a key the file does not hold stops the start, naming the key.
//
// Rotation (EncryptionKeyRotation): write [new, ...current] to the key file, seal with the new key from then on,
// re-seal every secret value, compact, then write [new]. A crash in between leaves a file that opens everything.

import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import { GROUP } from "../apis/management/v1/common.ts";
import { SIGNING_KEYS_PREFIX } from "../auth/signing/key-ring.ts";
import { OIDC_PREFIX } from "../identity/oidc-provider/store-adapter.ts";
import { PASSWORDS_PREFIX } from "../identity/password-store.ts";
import { SSO_STATE_PREFIX } from "../identity/sso/login-state.ts";
import { type EncryptedStore, encryptSecretValues } from "../storage/encryption/encrypted-store.ts";
import { resealSecretValues } from "../storage/encryption/reseal.ts";
import { isEncryptedValue, ValueCipher, ValueDecryptionError } from "../storage/encryption/value-cipher.ts";
import { type KeyValueStore, StorageError } from "../storage/types.ts";
import {
  EncryptionKeyFileError,
  generateEncryptionKey,
  readEncryptionKeys,
  writeEncryptionKeys,
} from "./encryption-key-file.ts";
import { INSTANCE_CA_PREFIX } from "./projects/instance-cas.ts";
import { ENCRYPTION_KEY_FILE } from "./store-files.ts";

/** Every key whose value is secret material. A new kind of secret adds its prefix here. */
export const SECRET_PREFIXES: readonly string[] = [
  SIGNING_KEYS_PREFIX, // token-signing private keys
  INSTANCE_CA_PREFIX, // client-CA private keys of virtual cluster instances
  PASSWORDS_PREFIX, // password hashes
  `/${GROUP}/configs/`, // the platform Config: SSO client secrets and other credentials in spec.raw
  OIDC_PREFIX, // the OpenID provider's sessions, grants, codes and tokens, and its cookie keys
  SSO_STATE_PREFIX, // single sign-on logins in progress (PKCE verifiers, nonces, CLI states), SAML assertion IDs
  `/${GROUP}/projectsecrets/`, // project secrets (and the platform's own, such as the secret store token)
];

export interface StoreEncryptionOptions {
  /** The backend, below the decorator (migration and rotation work on sealed values). */
  storage: KeyValueStore;
  dataDir: string;
  /** --encryption-key-file; default `<data-dir>/pki/encryption.key`, made on first start. */
  keyFile?: string;
  logger?: Logger;
}

export interface StoreEncryption {
  /** The store every other part of the platform uses. */
  store: EncryptedStore;
  keyFile: string;
  rotate(): Promise<{ keyID: string; retiredKeyIDs: string[]; reencrypted: number }>;
}

export async function startStoreEncryption(options: StoreEncryptionOptions): Promise<StoreEncryption> {
  const { storage, logger } = options;
  const keyFile = options.keyFile ?? join(options.dataDir, ENCRYPTION_KEY_FILE);
  let keys = await readEncryptionKeys(keyFile);
  if (!keys) keys = await createKeyFile(storage, keyFile, options.keyFile !== undefined);
  let cipher = new ValueCipher(keys);

  const migrated = await reseal(storage, cipher, keyFile);
  if (migrated.plain + migrated.rekeyed > 0) {
    await storage.compact(0);
    logger?.info(
      { plain: migrated.plain, reencrypted: migrated.rekeyed, keyID: cipher.primaryKeyId },
      "sealed secret values with the primary encryption key and compacted the store's history",
    );
  }
  if (keys.length > 1) {
    logger?.info(
      { keyFile, unused: cipher.keyIds.slice(1) },
      "every secret value is sealed with the first key of the encryption key file; the others may be removed",
    );
  }

  const rotateOnce = async () => {
    const retiredKeyIDs = cipher.keyIds;
    const fresh = generateEncryptionKey();
    // Old keys stay in the file (and the cipher) until no value needs them.
    keys = [fresh, ...(keys ?? [])];
    await writeEncryptionKeys(keyFile, keys);
    cipher = new ValueCipher(keys);
    const result = await resealSecretValues(storage, { secretPrefixes: SECRET_PREFIXES, cipher });
    await storage.compact(0);
    keys = [fresh];
    await writeEncryptionKeys(keyFile, keys);
    cipher = new ValueCipher(keys);
    logger?.info({ keyID: cipher.primaryKeyId, retired: retiredKeyIDs }, "rotated the encryption key");
    return { keyID: cipher.primaryKeyId, retiredKeyIDs, reencrypted: result.plain + result.rekeyed };
  };
  let rotating: Promise<unknown> = Promise.resolve();

  return {
    store: encryptSecretValues(storage, { secretPrefixes: SECRET_PREFIXES, cipher: () => cipher }),
    keyFile,
    rotate() {
      const run = rotating.then(rotateOnce);
      rotating = run.catch(() => {});
      return run;
    },
  };
}

/**
 * The first start's key file. Refused when the store already holds sealed values (the key file was lost or the
 * wrong path was given): a new key would only hide that they can no longer be read.
 */
async function createKeyFile(storage: KeyValueStore, keyFile: string, supplied: boolean): Promise<Uint8Array[]> {
  if (supplied) throw new EncryptionKeyFileError(`the encryption key file ${keyFile} does not exist`);
  for (const prefix of SECRET_PREFIXES) {
    for (const record of (await storage.list({ prefix })).records) {
      if (isEncryptedValue(record.value)) {
        throw new EncryptionKeyFileError(
          `the store holds encrypted values (${record.key}) but the encryption key file ${keyFile} is missing: ` +
            "restore it from your backup (or pass --encryption-key-file)",
        );
      }
    }
  }
  await mkdir(dirname(keyFile), { recursive: true, mode: 0o700 });
  const keys = [generateEncryptionKey()];
  await writeEncryptionKeys(keyFile, keys, { exclusive: true });
  return keys;
}

/**
 * resealSecretValues, with its failures explained: a value of a key the file does not hold means the wrong key file;
 * a value of a key it holds that does not open was damaged or forged, so the store is corrupt.
 */
async function reseal(storage: KeyValueStore, cipher: ValueCipher, keyFile: string) {
  try {
    return await resealSecretValues(storage, { secretPrefixes: SECRET_PREFIXES, cipher });
  } catch (error) {
    if (!(error instanceof ValueDecryptionError)) throw error;
    if (error.keyId !== undefined && cipher.keyIds.includes(error.keyId)) {
      throw new StorageError("Corrupt", `storage is corrupt: ${error.message}`);
    }
    throw new EncryptionKeyFileError(
      `${error.message}: ${keyFile} is not the key file this store was encrypted with; restore the right one from your backup`,
    );
  }
}
