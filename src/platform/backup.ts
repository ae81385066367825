// `virtualcluster platform backup`: a consistent snapshot of a data directory's store in one file. A running
// platform takes it itself (through its control socket) while it keeps serving; a stopped one is read directly.
// The file is checked, sealed with an HMAC keyed from the store's encryption key (backup-authentication.ts), written
// owner-only and put in place atomically.

import { randomUUID } from "node:crypto";
import { constants, createWriteStream, existsSync } from "node:fs";
import { access, open, rename, rm, stat } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { dirname, join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { inspectSnapshot, type SnapshotInfo, snapshotStoreFile } from "../storage/sqlite/snapshot.ts";
import { syncPath } from "../storage/sync-path.ts";
import { http } from "../utils/node-http.ts";
import { keyFileOf, sealBackup } from "./backup-authentication.ts";
import { SNAPSHOT_PATH } from "./control-socket.ts";
import { CONTROL_SOCKET_FILE, STORE_FILE } from "./store-files.ts";

export interface BackupOptions {
  dataDir: string;
  /** The snapshot file to write. */
  to: string;
  /** Replace `to` when it exists (refused otherwise). */
  force: boolean;
  /** The store's encryption key file (default <data-dir>/pki/encryption.key): the seal is keyed from it. */
  encryptionKeyFile?: string;
}

export interface BackupResult extends SnapshotInfo {
  file: string;
  /** True when a running platform took the snapshot while serving. */
  online: boolean;
  /** Id of the encryption key the seal was made under. */
  sealedWith: string;
}

export async function backupDataDir(options: BackupOptions): Promise<BackupResult> {
  const dataDir = resolve(options.dataDir);
  const file = resolve(options.to);
  if (existsSync(file) && !options.force) throw new Error(`${file} already exists: pass --force to replace it`);
  await checkSnapshotFolder(dirname(file));
  const keyFile = keyFileOf(dataDir, options.encryptionKeyFile);
  const temp = join(dirname(file), `.${randomUUID()}.snapshot-tmp`);
  try {
    await (await open(temp, "wx", 0o600)).close();
    const online = await fetchSnapshot(dataDir, temp);
    if (!online) await snapshotStopped(dataDir, temp);
    const info = inspectSnapshot(temp);
    const seal = await sealBackup(temp, keyFile);
    syncPath(temp);
    await rename(temp, file);
    syncPath(dirname(file));
    return { ...info, file, online, sealedWith: seal.keyId };
  } finally {
    await rm(temp, { force: true });
    await rm(`${temp}-journal`, { force: true });
  }
}

/** One line naming the folder when the snapshot cannot be written there (not an errno about a temporary file). */
async function checkSnapshotFolder(folder: string): Promise<void> {
  const stats = await stat(folder).catch(() => undefined);
  if (!stats) throw new Error(`cannot write the snapshot: the folder ${folder} does not exist (create it first)`);
  if (!stats.isDirectory()) throw new Error(`cannot write the snapshot: ${folder} is a file, not a folder`);
  try {
    await access(folder, constants.W_OK);
  } catch {
    throw new Error(`cannot write the snapshot: the folder ${folder} is not writable by this user`);
  }
}

/** Asks the platform serving `dataDir` for a snapshot; false when none answers on its control socket. */
async function fetchSnapshot(dataDir: string, temp: string): Promise<boolean> {
  const socketPath = join(dataDir, CONTROL_SOCKET_FILE);
  if (!existsSync(socketPath)) return false;
  const response = await new Promise<IncomingMessage | undefined>((done, reject) => {
    const call = http.request({ socketPath, path: SNAPSHOT_PATH, method: "GET" }, done);
    call.once("error", (error: NodeJS.ErrnoException) => {
      // A socket file a killed platform left behind.
      if (error.code === "ECONNREFUSED" || error.code === "ENOENT") done(undefined);
      else reject(error);
    });
    call.end();
  });
  if (!response) return false;
  if (response.statusCode !== 200) {
    let body = "";
    for await (const chunk of response) body += chunk;
    let message = body;
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      // not JSON: the body as it came
    }
    throw new Error(message || `the platform answered ${response.statusCode}`);
  }
  await pipeline(response, createWriteStream(temp, { flags: "w" }));
  return true;
}

async function snapshotStopped(dataDir: string, temp: string): Promise<void> {
  try {
    await snapshotStoreFile(join(dataDir, STORE_FILE), temp);
  } catch (error) {
    if (error instanceof Error && /locked by another process/.test(error.message)) {
      throw new Error(
        `a platform is running on ${dataDir} but does not answer on ${join(dataDir, CONTROL_SOCKET_FILE)}: retry once it has started, or stop it`,
        { cause: error },
      );
    }
    throw error;
  }
}
