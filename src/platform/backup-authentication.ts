// Backups that cannot be altered unnoticed: `platform backup` seals every snapshot with an HMAC keyed from the
// store's encryption key (the first key of pki/encryption.key or --encryption-key-file, through HKDF, so the MAC key
// is never a key that seals values), and `platform restore` refuses a snapshot whose seal does not match, naming
// the check that failed. Restoring into a new data directory takes the key file with --encryption-key-file. A
// snapshot without a seal (older versions, or a copied platform.db) is refused unless --allow-unauthenticated.

import { hkdfSync } from "node:crypto";
import { join } from "node:path";
import { encryptionKeyId } from "../storage/encryption/value-cipher.ts";
import {
  readSnapshotSeal,
  removeSeal,
  type SealKey,
  type SnapshotSeal,
  sealMatches,
  sealSnapshot,
} from "../storage/sqlite/snapshot-seal.ts";
import { readEncryptionKeys } from "./encryption-key-file.ts";
import { ENCRYPTION_KEY_FILE } from "./store-files.ts";

const INFO = "virtualcluster-platform backup authentication v1";

/** The MAC key derived from an encryption key; its id is the encryption key's own. */
function sealKey(key: Uint8Array): SealKey {
  return { id: encryptionKeyId(key), secret: new Uint8Array(hkdfSync("sha256", key, new Uint8Array(0), INFO, 32)) };
}

/** The key file a data directory's platform uses unless another is given. */
export function keyFileOf(dataDir: string, given: string | undefined): string {
  return given ?? join(dataDir, ENCRYPTION_KEY_FILE);
}

/** Seals the snapshot with the first key of `keyFile`; throws naming the file when it has none. */
export async function sealBackup(file: string, keyFile: string): Promise<SnapshotSeal> {
  const keys = await readEncryptionKeys(keyFile);
  if (!keys) {
    throw new Error(
      `cannot authenticate the backup: ${keyFile} does not exist (pass the platform's key file with --encryption-key-file)`,
    );
  }
  return sealSnapshot(file, sealKey(keys[0]));
}

export interface BackupCheck {
  /** The snapshot's seal, when it had one that matched. */
  seal?: SnapshotSeal;
  /** Said to the operator: an unauthenticated backup restored on request. */
  warnings: string[];
}

/** The first thing a restore does with its copy: check the seal, then remove it. Throws naming the failed check. */
export async function checkBackup(
  copy: string,
  from: string,
  options: { keyFile: string; allowUnauthenticated: boolean },
): Promise<BackupCheck> {
  const seal = readSnapshotSeal(copy);
  if (!seal) {
    const what = `${from} carries no authentication (a backup of a version before authenticated backups, or a copied platform.db)`;
    if (!options.allowUnauthenticated) {
      throw new Error(
        `backup authentication failed: ${what}; take a new backup with virtualcluster platform backup, or pass --allow-unauthenticated to restore it unchecked`,
      );
    }
    return { warnings: [`${what}: restored unchecked (--allow-unauthenticated)`] };
  }
  const keys = await readEncryptionKeys(options.keyFile);
  if (!keys) {
    throw new Error(
      `cannot check the authentication of ${from}: it was sealed under encryption key ${seal.keyId}, and ${options.keyFile} does not exist; copy pki/encryption.key of the data directory it was taken from, or pass the key file with --encryption-key-file`,
    );
  }
  const key = keys.map(sealKey).find((candidate) => candidate.id === seal.keyId);
  if (!key) {
    throw new Error(
      `cannot check the authentication of ${from}: it was sealed under encryption key ${seal.keyId}, which ${options.keyFile} does not hold (it holds ${keys.map(encryptionKeyId).join(", ")}); pass the key file it was taken with, with --encryption-key-file`,
    );
  }
  if (!sealMatches(copy, seal, key)) {
    throw new Error(
      `backup authentication failed: the contents of ${from} do not match its ${seal.algorithm || "seal"} under encryption key ${seal.keyId}, so it was changed after it was made; restore refused`,
    );
  }
  removeSeal(copy);
  return { seal, warnings: [] };
}
