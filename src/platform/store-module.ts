// The store module: the platform's store (SQLite in the data directory, or etcd), its encryption at rest and its
// housekeeping (quota, free disk, compaction, etcd defragmentation). It is the one module opened before the registry
// exists, because the registry is over its storage; it declares the EncryptionKeyRotation kind, the store's health
// checks and the housekeeping tasks, and closes last.

import { join, resolve } from "node:path";
import type { Logger } from "pino";
import { createEncryptionKeyRotationDefinition } from "../apis/management/v1/encryptionkeyrotation.ts";
import type { ApiMetrics } from "../http/metrics.ts";
import { keyCaller } from "../identity/key-caller.ts";
import type { RegistryOptions } from "../registry/registry.ts";
import type { EtcdStore } from "../storage/etcd/etcd-store.ts";
import { instrumentStore } from "../storage/instrumented-store.ts";
import type { ConversionEvent } from "../storage/sqlite/auto-vacuum.ts";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.ts";
import { type KeyValueStore, StorageError } from "../storage/types.ts";
import { formatBytes } from "../utils/byte-size.ts";
import { EncryptionKeyFileError, readEncryptionKeys } from "./encryption-key-file.ts";
import { type EtcdBackendOptions, openEtcdBackend, readEtcdTls } from "./etcd-backend.ts";
import { findUndecodableValue } from "./find-undecodable-value.ts";
import type { ManagementResourceParts } from "./management-resources.ts";
import type { ModuleDeclarations, ModuleRoutes, TaskMaker } from "./platform-module.ts";
import { type StoreEncryption, startStoreEncryption } from "./store-encryption.ts";
import { ENCRYPTION_KEY_FILE, restoreAdvice, STORE_FILE } from "./store-files.ts";
import { StoreHousekeeping, type StoreHousekeepingOptions } from "./store-housekeeping.ts";

export interface StoreModuleOptions {
  dataDir: string;
  metrics: ApiMetrics;
  etcd?: EtcdBackendOptions;
  encryptionKeyFile?: string;
  /** For tests of a full disk: SqliteStoreOptions.pageLimit of the store. */
  storePageLimit?: () => number;
  housekeeping?: StoreHousekeepingOptions;
  /** Whether etcd defragmentation may start now (the Config's maintenance window); default always. */
  mayDefragment?: () => boolean;
  logger?: Logger;
}

interface OpenStore {
  encryption: StoreEncryption & { etcd?: EtcdStore };
  storage: KeyValueStore;
  housekeeping?: StoreHousekeeping;
}

export class StoreModule implements ModuleDeclarations {
  readonly name = "store";
  readonly kinds: Pick<ManagementResourceParts, "encryptionKeyRotations">;
  private readonly options: StoreModuleOptions;
  private opened: Partial<OpenStore> = {};

  constructor(options: StoreModuleOptions) {
    this.options = options;
    this.kinds = {
      encryptionKeyRotations: createEncryptionKeyRotationDefinition({
        rotate: () => this.current().encryption.rotate(),
        isAdmin: (context) => keyCaller.managesAll(context),
      }),
    };
  }

  /** Opens the store, checks every value (openPlatformStore) and starts the housekeeping. */
  async open(): Promise<void> {
    const { options } = this;
    const encryption = await openPlatformStore(options);
    const storage = instrumentStore(encryption.store, (op, resource, ok, s) =>
      options.metrics.storageOperation(op, resource, ok, s),
    );
    this.opened = { encryption, storage };
    this.opened.housekeeping = await StoreHousekeeping.start({
      storage,
      etcd: encryption.etcd &&
        options.etcd && {
          store: encryption.etcd,
          endpoints: options.etcd.endpoints,
          tls: await readEtcdTls(options.etcd),
        },
      dataDir: options.dataDir,
      metrics: options.metrics.registry,
      options: options.housekeeping,
      logger: options.logger,
    });
  }

  /** A scheduled rotation of the encryption key (the maintenance window's task). */
  rotateEncryptionKey(): Promise<{ keyID: string; reencrypted: number }> {
    return this.current().encryption.rotate();
  }

  get storage(): KeyValueStore {
    return this.current().storage;
  }

  /** The etcd store, when the platform is on etcd (shared by its replicas). */
  get etcd(): EtcdStore | undefined {
    return this.current().encryption.etcd;
  }

  get housekeeping(): StoreHousekeeping {
    const { housekeeping } = this.current();
    if (!housekeeping) throw new Error("the store is not open");
    return housekeeping;
  }

  /** Past the store quota, creates and updates are refused; deletes go through (store-monitor.ts). */
  registryOptions(): RegistryOptions {
    return { writeGate: this.housekeeping.monitor.gate };
  }

  routes(): ModuleRoutes {
    const { storage, etcd, housekeeping } = this;
    return {
      // Failing while writes fail for lack of space, so a load balancer sends clients to a replica that can write.
      healthChecks: {
        "store-space": () => storage.checkSpace?.(),
        // Passes; warns (verbose line, Warning header) while free disk is low or the store is near or at its quota.
        "store-housekeeping": housekeeping.healthCheck,
        ...(etcd ? { etcd: () => etcd.checkHealth() } : {}),
      },
    };
  }

  tasks(): TaskMaker[] {
    const makers: TaskMaker[] = [];
    this.housekeeping.runOn({ run: (make) => makers.push(make) }, this.options.mayDefragment);
    return makers;
  }

  async close(): Promise<void> {
    const { housekeeping, storage } = this.opened;
    this.opened = {};
    await housekeeping?.close();
    await storage?.close();
  }

  private current(): OpenStore {
    const { encryption, storage } = this.opened;
    if (!encryption || !storage) throw new Error("the store is not open");
    return { encryption, storage, housekeeping: this.opened.housekeeping };
  }
}

/**
 * Opens the store, its encryption (which seals plain secret values and opens every sealed one), and reads every
 * value once: a damaged database file, a secret value that does not open or a value that does not decode stops the
 * start with one line naming the file or key, before anything else reads (or writes) the store.
 */
async function openPlatformStore(options: StoreModuleOptions) {
  const { dataDir, logger } = options;
  const path = join(dataDir, STORE_FILE);
  const corrupt = (error: unknown) =>
    error instanceof StorageError && error.storageCode === "Corrupt"
      ? new Error(`the platform's ${error.message}; ${restoreAdvice(dataDir)}`, { cause: error })
      : error;
  const etcd = options.etcd && (await openEtcdBackend(options.etcd));
  const store =
    etcd ??
    (await openSqliteStore({
      path,
      pageLimit: options.storePageLimit,
      onConversion: (event) => logConversion(logger, event),
      onSpaceChange: (outOfSpace, message) => {
        if (outOfSpace) logger?.error({ path }, `${message}: writes fail until space is freed`);
        else logger?.info({ path }, "the store can be written again");
      },
    }).catch((error: unknown) => {
      throw corrupt(error);
    }));
  try {
    // Replicas must seal with one key: on etcd the key file is never made here (two first starts would make two).
    if (etcd) await requireSharedKeyFile(options.encryptionKeyFile ?? join(dataDir, ENCRYPTION_KEY_FILE));
    const encryption = await startStoreEncryption({
      storage: store,
      dataDir,
      keyFile: options.encryptionKeyFile && resolve(options.encryptionKeyFile),
      logger,
    });
    const bad = await findUndecodableValue(encryption.store);
    if (bad) {
      const reason = `key ${bad.key} (revision ${bad.revision}) does not hold a JSON object`;
      throw new StorageError("Corrupt", `storage ${path} is corrupt: ${reason}`);
    }
    return { ...encryption, etcd };
  } catch (error) {
    await store.close();
    throw corrupt(error);
  }
}

/** The one-time conversion of a store file made before incremental vacuum (src/storage/sqlite/auto-vacuum.ts). */
function logConversion(logger: Logger | undefined, event: ConversionEvent): void {
  const fields = { path: event.path, bytes: event.bytesBefore };
  if (event.phase === "started") {
    logger?.info(fields, `converting the store to incremental vacuum: one VACUUM of ${formatBytes(event.bytesBefore)}`);
  } else if (event.phase === "converted") {
    logger?.info(
      { ...fields, bytesAfter: event.bytesAfter, durationMs: Math.round(event.durationMs ?? 0) },
      `converted the store to incremental vacuum in ${((event.durationMs ?? 0) / 1000).toFixed(1)} s: ${formatBytes(event.bytesBefore)} -> ${formatBytes(event.bytesAfter ?? 0)}`,
    );
  } else {
    logger?.warn(
      fields,
      `the store was not converted to incremental vacuum (${event.reason}): space compaction frees is reused but not returned; convert it with the platform stopped: virtualcluster platform store-info --data-dir DIR --vacuum`,
    );
  }
}

async function requireSharedKeyFile(file: string): Promise<void> {
  if (await readEncryptionKeys(file)) return;
  throw new EncryptionKeyFileError(
    `with --store etcd every replica needs the same encryption key file, and ${file} does not exist: make one ` +
      `(openssl rand -base64 32 > FILE; chmod 600 FILE) and give it to every replica with --encryption-key-file`,
  );
}
