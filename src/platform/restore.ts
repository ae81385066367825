// `virtualcluster platform restore`: makes a backup the store of a data directory. The snapshot is copied in,
// checked (SQLite's integrity check and the store's schema, then its authentication, then that every value decodes)
// and only then put in place of the store, atomically and owner-only. A store in use or one holding keys (without --force) is never touched.

import { randomUUID } from "node:crypto";
import { chmodSync, copyFileSync, existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { installSnapshot, type ReplacedStore, StoreNotEmptyError } from "../storage/sqlite/install-snapshot.ts";
import { inspectSnapshot, type SnapshotInfo } from "../storage/sqlite/snapshot.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { StorageError } from "../storage/types.ts";
import { checkBackup, keyFileOf } from "./backup-authentication.ts";
import { ADMIN_KEY_FILE } from "./bootstrap.ts";
import { controlSocketAnswers } from "./control-socket.ts";
import { findUndecodableValue } from "./find-undecodable-value.ts";
import { ENCRYPTION_KEY_FILE, STORE_FILE } from "./store-files.ts";

export interface RestoreOptions {
  /** The snapshot (from `platform backup`, or the platform.db of a stopped platform). */
  from: string;
  dataDir: string;
  /** Replace a store that holds keys. */
  force: boolean;
  /** The encryption key file the backup was sealed with (default <data-dir>/pki/encryption.key). */
  encryptionKeyFile?: string;
  /** Restore a backup that carries no authentication (older versions, a copied platform.db). */
  allowUnauthenticated?: boolean;
}

export interface RestoreResult extends SnapshotInfo {
  /** The store file written. */
  file: string;
  /** What was there before (0 keys when nothing). */
  replaced: ReplacedStore;
  /** What the data directory lacks that the store does not hold (pki/ keys, the admin key file). */
  warnings: string[];
  /** Id of the encryption key whose seal was checked; undefined for an unauthenticated backup let in. */
  authenticatedWith?: string;
}

export async function restoreDataDir(options: RestoreOptions): Promise<RestoreResult> {
  const from = resolve(options.from);
  const dataDir = resolve(options.dataDir);
  if (!existsSync(from)) throw new Error(`${from} does not exist`);
  if (existsSync(`${from}-wal`)) {
    throw new Error(
      `${from} has a write-ahead log beside it, so it is a store in use or not cleanly stopped: take a snapshot with virtualcluster platform backup`,
    );
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const running = () => new Error(`a platform is running on ${dataDir}: stop it before restoring`);
  if (await controlSocketAnswers(dataDir)) throw running();
  const target = join(dataDir, STORE_FILE);
  const temp = join(dataDir, `.restore-${randomUUID()}.db`);
  try {
    copyFileSync(from, temp);
    chmodSync(temp, 0o600);
    const info = inspectSnapshot(temp);
    const checked = await checkBackup(temp, from, {
      keyFile: keyFileOf(dataDir, options.encryptionKeyFile),
      allowUnauthenticated: options.allowUnauthenticated === true,
    });
    await checkValues(temp, from);
    let replaced: ReplacedStore;
    try {
      replaced = installSnapshot({ file: temp, path: target, force: options.force });
    } catch (error) {
      if (error instanceof StoreNotEmptyError) {
        throw new Error(
          `${error.message}: pass --force to replace it (back it up first: virtualcluster platform backup --data-dir ${dataDir} --to FILE)`,
        );
      }
      if (error instanceof Error && /locked by another process/.test(error.message)) throw running();
      if (error instanceof StorageError && error.storageCode === "Corrupt") {
        throw new Error(`${error.message}: pass --force to replace the damaged store`);
      }
      throw error;
    }
    const warnings = [...checked.warnings, ...missingBesideStore(dataDir, options.encryptionKeyFile)];
    return { ...info, file: target, replaced, warnings, authenticatedWith: checked.seal?.keyId };
  } finally {
    for (const suffix of ["", "-wal", "-journal"]) await rm(`${temp}${suffix}`, { force: true });
  }
}

/** Opens the copy as the platform will and decodes every value, so a bad backup fails here, not at start. */
async function checkValues(copy: string, from: string): Promise<void> {
  const store = await openSqliteStore({ path: copy });
  try {
    const bad = await findUndecodableValue(store);
    if (bad) {
      throw new Error(`${from} is corrupt: key ${bad.key} (revision ${bad.revision}) does not hold a JSON object`);
    }
  } finally {
    await store.close();
  }
}

/** The store holds objects and keys for signing; the CA, the encryption key and the admin key file live beside it. */
function missingBesideStore(dataDir: string, keyFile: string | undefined): string[] {
  const warnings: string[] = [];
  if (!existsSync(join(dataDir, "pki", "ca.key"))) {
    warnings.push(
      `${join(dataDir, "pki")} has no ca.key: the platform will create a new certificate authority, and kubeconfigs that trust the old one stop working; copy pki/ from the data directory that was backed up`,
    );
  }
  if (!keyFile && !existsSync(join(dataDir, ENCRYPTION_KEY_FILE))) {
    warnings.push(
      `${join(dataDir, ENCRYPTION_KEY_FILE)} is missing: the store's secrets (signing keys, instance CA keys, passwords, the Config) cannot be read without it, and the platform will not start; copy it from the data directory that was backed up, or pass the key file with --encryption-key-file`,
    );
  }
  if (!existsSync(join(dataDir, ADMIN_KEY_FILE))) {
    warnings.push(
      `${join(dataDir, ADMIN_KEY_FILE)} is missing: the restored store already has its admin, so no new key is made; copy the file from the data directory that was backed up, or log in with the admin's password`,
    );
  }
  return warnings;
}
